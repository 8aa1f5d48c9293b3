"""The doctor's report on disk (device/doctor/report.py), as `whisperkv doctor --out` and the studio's Write
doctor.html… write it: doctor.json holds the --json document only, doctor.html the page, in a folder made if missing."""
from __future__ import annotations

import json

from device.doctor.report import write_report


def test_the_report_is_the_json_document_and_its_page(tmp_path):
    rungs = [{"name": "reach", "status": "pass", "figures": {"decided_by": "a shell answers"}, "fix": None}]
    studio = {"device": "local", "bundle": None, "rungs": rungs, "lines": ["✔ reach"], "runs": {}}
    page = write_report(tmp_path / "new" / "folder", studio, {})
    assert page == tmp_path / "new" / "folder" / "doctor.html"
    assert json.loads((page.parent / "doctor.json").read_text()) == {"device": "local", "bundle": None, "rungs": rungs}
    html = page.read_text()
    assert html.startswith("<!doctype html>") and "a shell answers" in html and "every rung passed" in html
