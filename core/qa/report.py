"""QA run reports: JSON (everything), CSV (one row per clip) and one self-contained HTML page."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from core.errors import WhisperKVError
from core.qa import html as qa_html
from core.qa.run import SuiteResult

CSV_COLUMNS = ("name", "language", "metric", "error_rate", "max_error", "passed", "stop_reason", "verdict",
               "tokens", "encoder_ms", "per_token_ms_p50", "per_token_ms_p95", "rtf", "duration_s", "wall_ms",
               "failures", "text", "reference", "audio")


def to_json(result: SuiteResult) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=False, indent=1)


def to_csv(result: SuiteResult) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_COLUMNS)
    for r in result.results:
        row = r.to_dict() | {"failures": "; ".join(r.failures)}
        writer.writerow(["" if row[c] is None else row[c] for c in CSV_COLUMNS])
    return buf.getvalue()


def write_reports(result: SuiteResult, out: str | Path) -> dict[str, Path]:
    """qa.json, qa.csv and qa.html in `out` (created if needed); returns the paths by format."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "qa.json", "csv": out / "qa.csv", "html": out / "qa.html"}
        paths["json"].write_text(to_json(result), encoding="utf-8")
        paths["csv"].write_text(to_csv(result), encoding="utf-8", newline="")
        paths["html"].write_text(qa_html.render(result), encoding="utf-8")
    except OSError as exc:
        raise WhisperKVError(f"cannot write the QA report to {out}: {exc.strerror or exc}",
                             "pass a writable directory with --out") from exc
    return paths
