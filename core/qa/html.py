"""One self-contained HTML page for a QA run on one or several devices: the summary table (a column
group per device, and the cross-device view), then each clip on each device with its verdict, its marks
against a baseline, a word-level diff against the reference and inline-SVG graphs of p(EOT), per-token
latency, cache fill and timestamped segments, and for a failing clip run with attention, where each decode
step looked in the audio."""
from __future__ import annotations

from html import escape

from core.model.device_words import meta_words
from core.model.dims import ModelDims
from core.model.npu_profile import label
from core.qa import html_tables as tables
from core.qa.baseline import describe
from core.qa.chart import Chart, heatmap_svg
from core.qa.farm import QAReport
from core.qa.run import ClipResult, SuiteResult
from core.qa.word_diff import LEGEND, diff_html

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
table { border-collapse: collapse; margin-bottom: 16px; }
td, th { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; }
td:first-child, th:first-child, td:last-child, th:last-child, td.text { text-align: left; }
th.group { text-align: center; background: #eceff1; } colgroup.device { border-left: 2px solid #999; }
.pass { color: #1b5e20; font-weight: bold; } .fail { color: #b71c1c; font-weight: bold; }
section { border-top: 2px solid #ccc; margin-top: 24px; padding-top: 8px; }
.verdict { background: #eceff1; padding: 4px 8px; border-radius: 4px; display: inline-block; }
del { background: #ffcdd2; text-decoration: line-through; } ins { background: #c8e6c9; text-decoration: none; }
.sub { outline: 1px solid #ef6c00; background: #fff3e0; } .legend { font-size: 12px; margin-left: 8px; }
.mark { padding: 0 4px; border-radius: 3px; color: #fff; background: #6d4c41; }
.mark.regressed { background: #b71c1c; } .mark.slower { background: #ef6c00; } .mark.changed { background: #1565c0; }
.charts { display: flex; flex-wrap: wrap; gap: 8px; } .muted { color: #666; }
"""


def charts(r: ClipResult) -> list[str]:
    s = r.series
    n = len(s.get("step", []))
    if not n:
        return []
    windows = [i for i in range(1, n) if s["window"][i] != s["window"][i - 1]]
    eot = Chart("p(EOT) (red) and its strongest rival (grey)", n - 1 or 1, 1.0, "{:.1f}")
    eot.line(s.get("rival_prob", []), "#9e9e9e").line(s["eot_prob"], "#c62828")
    ms = Chart("runner ms per token", n - 1 or 1, max(s["ms"][1:] or s["ms"]) * 1.1 or 1, "{:.0f}")
    ms.line(s["ms"], "#1565c0")
    cache = Chart("KV cache fill (positions)", n - 1 or 1, ModelDims.n_text_ctx, "{:.0f}")
    cache.line(s["cache_len"], "#2e7d32")
    for c in (eot, ms, cache):
        for i in windows:
            c.rule(i, "#555", f"window {s['window'][i]}")
    for w in r.windows:
        if w.get("eot_step") is not None:
            eot.rule(_run_index(s, w["window"]) + w["eot_step"], "#c62828", f"EOT p={w['eot_prob']:.2f}")
    if r.loop:
        run_index = _run_index(s, r.loop.get("window", 0))
        label = f"{r.loop['n']}-gram loop from step {r.loop['start_step']}"
        for c in (eot, cache):
            c.band(run_index + r.loop["start_step"], run_index + r.loop["end_step"], "#ff8f00", label)
    out = [eot.svg(), ms.svg(), cache.svg()]
    if r.attention:
        out.append(heatmap_svg("cross-attention: where each step looked (red: each window's last step)",
                               r.attention))
    if r.segments and r.duration_s:
        timeline = Chart("timestamped segments", r.duration_s, 1.0, "")
        for k, seg in enumerate(r.segments):
            timeline.hbar(seg["start"], seg["end"], k, "#6a1b9a",
                          f"{seg['start']:.2f}–{seg['end']:.2f} s: {seg['text'].strip()}")
        out.append(timeline.svg("s"))
    return out


def _run_index(series: dict, window: int) -> int:
    """The run-wide index of `window`'s first step (the charts' x axis spans all windows)."""
    return next((i for i, w in enumerate(series["window"]) if w == window), 0)


def clip_section(anchor: str, r: ClipResult, title: str, against: list[str] | None = None) -> str:
    """One clip on one device; `against`: its marks against the baseline, as phrases (None: no baseline)."""
    failures = "".join(f"<li>{escape(f)}</li>" for f in r.failures)
    segments = "".join(f"<tr><td>{s['start']:.2f}</td><td>{s['end']:.2f}</td><td class='text'>"
                       f"{escape(s['text'].strip())}</td></tr>" for s in r.segments)
    baseline = "" if against is None else (
        "<p>Against the baseline: " + ("; ".join(f"<b>{escape(a)}</b>" for a in against) or "no change") + "</p>")
    return (f'<section id="{anchor}"><h2>{escape(title)} {tables.badge(r)}</h2>'
            f'<p class="muted">{escape(r.audio)} · {escape(r.language)} · {r.duration_s:.2f} s audio · '
            f'{r.summary_cells()[2]} (limit {r.max_error:.2f})</p>'
            f'<p>Why it stopped: <span class="verdict">{escape(r.verdict)}</span>'
            + (f' · {escape(r.focus)}' if r.focus else "") + "</p>" + baseline
            + (f"<ul class='fail'>{failures}</ul>" if failures else "")
            + (f"<p class='{'fail' if r.board['flag'] else 'muted'}'>Board: {escape(_board_line(r.board))}</p>"
               if r.board else "")
            + (npu_profile_html(r.npu_profile) if r.npu_profile else "")
            + f"<p><b>Transcript</b>: {escape(r.text)}</p>"
            f"<p><b>Against the reference</b> (normalised, by {'character' if r.metric == 'cer' else 'word'}) "
            f"{LEGEND}:<br>{diff_html(r.reference, r.text, r.metric == 'cer')}</p>"
            + (f"<table><tr><th>start s</th><th>end s</th><th>text</th></tr>{segments}</table>" if segments else "")
            + f'<div class="charts">{"".join(charts(r))}</div></section>')


def npu_profile_html(found: list[dict], top: int = 10) -> str:
    """The Neuron profiler's slowest ops a graph (core/model/npu_profile.py), per inference."""
    out = []
    for p in found:
        rows = "".join(f"<tr><td>{o['ms']:.3f}</td><td>{o['share']:.1%}</td><td>{escape(o['name'])}</td></tr>"
                       for o in p["ops"][:top])
        out.append(f"<p><b>NPU profile, {escape(label(p['graph']))}</b>: {p['ms_per_inference']:.2f} ms an "
                   f"inference over {p['inferences']} <span class='muted'>({escape(p['table'])})</span></p>"
                   f"<table><tr><th>ms</th><th>share</th><th>op</th></tr>{rows}</table>")
    return "".join(out)


def _board_line(b: dict) -> str:
    temp = "no thermal zone" if b["peak_temp_c"] is None else f"peak {b['peak_temp_c']:.1f} °C"
    rss = "?" if b["peak_rss_mb"] is None else f"{b['peak_rss_mb']:.0f} MB"
    return f"{b['samples']} samples, runner CPU {b['cpu_s']:.1f} s, peak RSS {rss}, {temp}" + \
        (f" — {b['flag']}: its timings are not a cool board's" if b["flag"] else "")


def _against(report: QAReport, device: str, r: ClipResult) -> list[str] | None:
    if not report.baseline:
        return None
    c = report.comparison(device, r.name)
    return ["not in the baseline"] if c is None else describe(c, r)


def _sections(report: QAReport) -> str:
    if not report.multi:
        run = report.runs[0]
        return "".join(clip_section(tables.anchor(report, run.device, k), r, r.name, _against(report, run.device, r))
                       for k, r in enumerate(run.result.results))
    return "".join(clip_section(tables.anchor(report, run.device, k), r, f"{r.name} on {run.device}",
                                _against(report, run.device, r))
                   for name in report.clip_names() for run in report.runs
                   for k, r in enumerate(run.result.results) if r.name == name)


def _baseline_line(report: QAReport) -> str:
    b = report.baseline
    if not b:
        return ""
    n = {m: sum(m in c.marks for c in report.comparisons.values()) for m in ("regressed", "slower", "changed")}
    return (f"<p>Against the baseline {escape(b['path'])}: " + ", ".join(f"{v} {k}" for k, v in n.items())
            + f" (slower: {escape(b['slower'])}; these fail the run: {escape(', '.join(b['fail_on']) or 'none')})</p>")


def render(report: QAReport | SuiteResult) -> str:
    if isinstance(report, SuiteResult):
        report = QAReport.single(report)
    verdict = "PASS" if report.passed else "FAIL"
    doc = report.to_dict()
    meta = escape(meta_words(doc["meta"]))
    where = f" on {len(report.runs)} devices" if report.multi else ""
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>QA {escape(report.suite)}: {verdict}</title><style>{STYLE}</style></head><body>"
            f"<h1>QA: {escape(report.suite)} — <span class='{verdict.lower()}'>{verdict}</span> "
            f"({doc['n_passed']}/{doc['n_clips']} clips{where})</h1>"
            f"<p class='muted'>{escape(report.path)}<br>{meta}</p>"
            f"<p class='muted'>RTF is host wall time from sending the audio to the last event, over the "
            f"audio's duration; per-token ms leaves out each window's first step, which carries the prompt."
            + (" Each device after the first is compared with the first: tokens identical or not, the WER/CER "
               "difference, and the ratio of p50 ms/token." if report.multi else "") + "</p>"
            + tables.devices(report) + _baseline_line(report)
            + (tables.multi_table(report) if report.multi else tables.single_table(report))
            + _sections(report) + "</body></html>")
