"""The doctor's report on disk: doctor.json (the --json document) and doctor.html (report_html.py), written by
`whisperkv doctor --out DIR` (with the board's logs beside them) and by the studio's Write doctor.html…
(app/board/check_view.py) alike."""
from __future__ import annotations

import json
from pathlib import Path

from device.doctor.report_html import render

DOC_KEYS = ("device", "bundle", "rungs")     # the --json document; the studio's report adds its lines and runs


def write_report(folder: Path, doc: dict, runs: dict, logs: dict | None = None) -> Path:
    """doctor.json and doctor.html in `folder` (made if missing), and the board's logs beside them (file name ->
    text, device/doctor/board_logs.py); returns doctor.html's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (logs or {}).items():
        (folder / name).write_text(text)
    doc = {k: doc.get(k) for k in DOC_KEYS}
    (folder / "doctor.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    page = folder / "doctor.html"
    page.write_text(render(doc, runs))
    return page
