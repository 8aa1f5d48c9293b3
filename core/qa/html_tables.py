"""The HTML report's summary tables: one device as the CLI prints it; several devices as a column group
each, then the cross-device group (each device against the first). With a baseline, a column of marks."""
from __future__ import annotations

from html import escape

from core.model.device_words import SILENT, machine_words, meta_words
from core.qa.board_cost import HOT_C
from core.qa.device_compare import DEVICE_ROW_COLUMNS
from core.qa.farm import QAReport
from core.qa.run import SUMMARY_COLUMNS, ClipResult

# The columns each device's group shows, picked from SUMMARY_COLUMNS.
DEVICE_COLUMNS = ("result", "error rate", "stop", "tokens", "ms/token p50", "RTF", "ran on")


def badge(r: ClipResult) -> str:
    return '<span class="pass">PASS</span>' if r.passed else '<span class="fail">FAIL</span>'


def marks_cell(report: QAReport, device: str, name: str) -> str:
    c = report.comparison(device, name)
    if c is None:
        return '<span class="muted">new</span>'
    return " ".join(f'<span class="mark {m}">{m}</span>' for m in c.marks) or '<span class="muted">same</span>'


def anchor(report: QAReport, device: str, k: int) -> str:
    if not report.multi:
        return f"clip{k}"
    return f"clip{k}-{[run.device for run in report.runs].index(device)}"


def _row(cells) -> str:
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def single_table(report: QAReport) -> str:
    run = report.runs[0]
    head = list(SUMMARY_COLUMNS) + (["vs baseline"] if report.baseline else [])
    rows = []
    for k, r in enumerate(run.result.results):
        name, _, *rest = (escape(c) for c in r.summary_cells())
        cells = [f'<a href="#{anchor(report, run.device, k)}">{name}</a>', badge(r), *rest]
        rows.append(_row(cells + ([marks_cell(report, run.device, r.name)] if report.baseline else [])))
    return "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(rows) + "</table>"


def _device_cells(report: QAReport, device: str, r: ClipResult | None, k: int) -> list[str]:
    width = len(DEVICE_COLUMNS) + bool(report.baseline)
    if r is None:
        return ['<span class="muted">not run</span>'] + [""] * (width - 1)
    by_column = dict(zip(SUMMARY_COLUMNS, (escape(c) for c in r.summary_cells())))
    cells = [f'<a href="#{anchor(report, device, k)}">{badge(r)}</a>']
    cells += [by_column[c] for c in DEVICE_COLUMNS[1:]]
    return cells + ([marks_cell(report, device, r.name)] if report.baseline else [])


def multi_table(report: QAReport) -> str:
    """Clip, then a column group per device, then a group per device after the first against it."""
    others = report.runs[1:]
    per_device = list(DEVICE_COLUMNS) + (["vs baseline"] if report.baseline else [])
    top = ['<th rowspan="2">clip</th>']
    top += [f'<th colspan="{len(per_device)}" class="group">{escape(run.device)}</th>' for run in report.runs]
    top += [f'<th colspan="{len(DEVICE_ROW_COLUMNS)}" class="group">{escape(run.device)} vs '
            f'{escape(report.runs[0].device)}</th>' for run in others]
    sub = [f"<th>{h}</th>" for _ in report.runs for h in per_device]
    sub += [f"<th>{h}</th>" for _ in others for h in DEVICE_ROW_COLUMNS]
    vs_first = {(row.device, row.name): row for row in report.device_rows}
    by_device = [{r.name: (k, r) for k, r in enumerate(run.result.results)} for run in report.runs]
    rows = []
    for name in report.clip_names():
        cells = [escape(name)]
        for run, clips in zip(report.runs, by_device):
            k, r = clips.get(name, (0, None))
            cells += _device_cells(report, run.device, r, k)
        for run in others:
            row = vs_first.get((run.device, name))
            cells += [escape(c) for c in (row.cells() if row else ("-",) * len(DEVICE_ROW_COLUMNS))]
        rows.append(_row(cells))
    groups = "<colgroup></colgroup>" + "".join(f'<colgroup span="{len(per_device)}" class="device"></colgroup>'
                                               for _ in report.runs)
    groups += "".join(f'<colgroup span="{len(DEVICE_ROW_COLUMNS)}" class="device"></colgroup>' for _ in others)
    return ("<table>" + groups + "<tr>" + "".join(top) + "</tr><tr>" + "".join(sub) + "</tr>" + "".join(rows)
            + "</table>")


def devices(report: QAReport) -> str:
    """With several devices, one line each: what it reported about itself, or why it failed; then what each
    board paid (peak memory and temperature, the clips that ran hot)."""
    if not report.multi:
        failed = report.runs[0].error
        return (f"<ul class='fail'><li>{escape(failed)}</li></ul>" if failed else "") + board_costs(report)
    items = []
    for run in report.runs:
        meta = escape(meta_words(run.result.meta, with_device=False))
        failed = (f" <span class='fail'>FAILED ({len(run.result.results)} clips done): {escape(run.error)}</span>"
                  if run.error else "")
        items.append(f"<li><b>{escape(run.device)}</b> <span class='muted'>{meta}</span>{failed}</li>")
    return f"<ul>{''.join(items)}</ul>" + board_costs(report)


def board_costs(report: QAReport) -> str:
    """Per device: its SoC and NPU, peak runner memory, lowest available memory, peak temperature, and the
    clips flagged for running while the board throttled or was hot (core/qa/board_cost.py)."""
    rows = []
    for run in report.runs:
        soc, cost = run.result.meta.get("soc") or {}, run.board
        if not (soc or cost):
            continue
        cell = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
        cost = cost or {}
        flagged = ", ".join(cost.get("flagged", []))
        npu = soc.get("npu") if soc.get("npu") not in SILENT else "-"
        rows.append(f"<tr><td>{escape(run.device)}</td><td>{escape(machine_words(run.result.meta))}</td>"
                    f"<td>{escape(npu)}</td><td>{cell(cost.get('peak_rss_mb'), '.0f')}</td>"
                    f"<td>{cell(cost.get('min_mem_available_mb'), '.0f')}</td>"
                    f"<td>{cell(cost.get('peak_temp_c'), '.1f')}</td>"
                    f"<td class='text{' fail' if flagged else ''}'>{escape(flagged) or 'none'}</td></tr>")
    if not rows:
        return ""
    return ("<h3>What each board paid</h3><table><tr><th>device</th><th>what it is</th><th>NPU</th>"
            "<th>peak runner RSS MB</th><th>lowest available MB</th><th>peak °C</th>"
            f"<th>ran throttling or ≥ {HOT_C:.0f} °C</th></tr>{''.join(rows)}</table>")
