"""QA run reports, one row each of FORMATS (core/file_formats.py): JSON (everything), CSV (one row per clip; with
several devices, a column group per device and the cross-device columns) and one self-contained HTML page."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Iterable

from core.errors import WhisperKVError
from core.file_formats import FileFormat, text_writer
from core.qa import html as qa_html
from core.qa.farm import QAReport
from core.qa.run import SuiteResult

CSV_COLUMNS = ("name", "language", "metric", "error_rate", "max_error", "passed", "stop_reason", "verdict",
               "tokens", "encoder_ms", "per_token_ms_p50", "per_token_ms_p95", "rtf", "duration_s", "wall_ms",
               "failures", "text", "reference", "audio", "marks")
CLIP_COLUMNS = ("name", "language", "metric", "max_error", "reference", "audio")   # shared by every device
DEVICE_ROW_CSV = ("tokens_identical", "error_delta", "latency_ratio")


def _report(report: QAReport | SuiteResult) -> QAReport:
    return QAReport.single(report) if isinstance(report, SuiteResult) else report


def to_json(report: QAReport | SuiteResult) -> str:
    return json.dumps(_report(report).to_dict(), ensure_ascii=False, indent=1)


def _marks(report: QAReport, device: str, name: str) -> str:
    if not report.baseline:
        return ""
    c = report.comparison(device, name)
    return "new" if c is None else " ".join(c.marks)


def _cells(report: QAReport, device: str, r) -> dict:
    return r.to_dict() | {"failures": "; ".join(r.failures), "marks": _marks(report, device, r.name)}


def to_csv(report: QAReport | SuiteResult) -> str:
    report = _report(report)
    buf = io.StringIO()
    writer = csv.writer(buf)
    if not report.multi:
        writer.writerow(CSV_COLUMNS)
        run = report.runs[0]
        for r in run.result.results:
            row = _cells(report, run.device, r)
            writer.writerow(["" if row[c] is None else row[c] for c in CSV_COLUMNS])
        return buf.getvalue()
    per_device = [c for c in CSV_COLUMNS if c not in CLIP_COLUMNS]
    first, others = report.runs[0].device, report.runs[1:]
    writer.writerow(list(CLIP_COLUMNS) + [f"{run.device} {c}" for run in report.runs for c in per_device]
                    + [f"{run.device} vs {first} {c}" for run in others for c in DEVICE_ROW_CSV])
    by_device = [{r.name: r for r in run.result.results} for run in report.runs]
    vs_first = {(row.device, row.name): row for row in report.device_rows}
    for name in report.clip_names():
        rows = [_cells(report, run.device, clips[name]) if name in clips else {}
                for run, clips in zip(report.runs, by_device)]
        shared = next(row for row in rows if row)
        cells = [shared[c] for c in CLIP_COLUMNS] + [row.get(c) for row in rows for c in per_device]
        cells += [getattr(vs_first.get((run.device, name)), c, None) for run in others for c in DEVICE_ROW_CSV]
        writer.writerow(["" if c is None else c for c in cells])
    return buf.getvalue()


# The report's files, one row each: `whisperkv qa --format` and its help, and the QA tab's report folder, come from
# this table.
FORMATS: list[FileFormat[QAReport]] = [
    FileFormat("json", ".json", text_writer(to_json), "everything, as a baseline for a later run", "JSON"),
    FileFormat("csv", ".csv", text_writer(to_csv, newline=""), "one row per clip (with several devices, a "
               "column group per device and the cross-device columns)", "CSV"),
    FileFormat("html", ".html", text_writer(qa_html.render), "one self-contained page: the summary, each clip's "
               "verdict, word diff and graphs", "HTML page"),
]


def file_name(fmt: FileFormat) -> str:
    return f"qa{fmt.suffix}"


def write_reports(report: QAReport | SuiteResult, out: str | Path,
                  names: Iterable[str] | None = None) -> dict[str, Path]:
    """qa.json, qa.csv, qa.html (every row of FORMATS, or those named) in `out` (created if needed); returns the
    paths by format."""
    report = _report(report)
    out = Path(out)
    chosen = [f for f in FORMATS if names is None or f.name in names]
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = {f.name: out / file_name(f) for f in chosen}
        for f in chosen:
            f.write(report, paths[f.name])
    except OSError as exc:
        raise WhisperKVError(f"cannot write the QA report to {out}: {exc.strerror or exc}",
                             "pass a writable directory with --out") from exc
    return paths
