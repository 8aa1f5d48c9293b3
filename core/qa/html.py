"""One self-contained HTML page for a QA run: the summary table, then each clip with its verdict,
a reference/hypothesis diff and inline-SVG graphs of p(EOT), per-token latency, cache fill and
timestamped segments."""
from __future__ import annotations

import difflib
from html import escape

from core.model.weights import ModelDims
from core.qa.chart import Chart
from core.qa.run import SUMMARY_COLUMNS, ClipResult, SuiteResult
from core.qa.scoring import normalize

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
table { border-collapse: collapse; } td, th { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; }
td:first-child, th:first-child, td:last-child, th:last-child, td.text { text-align: left; }
.pass { color: #1b5e20; font-weight: bold; } .fail { color: #b71c1c; font-weight: bold; }
section { border-top: 2px solid #ccc; margin-top: 24px; padding-top: 8px; }
.verdict { background: #eceff1; padding: 4px 8px; border-radius: 4px; display: inline-block; }
del { background: #ffcdd2; text-decoration: line-through; } ins { background: #c8e6c9; text-decoration: none; }
.charts { display: flex; flex-wrap: wrap; gap: 8px; } .muted { color: #666; }
"""


def _badge(r: ClipResult) -> str:
    return '<span class="pass">PASS</span>' if r.passed else '<span class="fail">FAIL</span>'


def diff_html(reference: str, hypothesis: str, by_char: bool) -> str:
    """Normalised reference against hypothesis: deletions struck through, insertions highlighted."""
    ref, hyp = normalize(reference), normalize(hypothesis)
    a, b = (list(ref.replace(" ", "")), list(hyp.replace(" ", ""))) if by_char else (ref.split(), hyp.split())
    sep = "" if by_char else " "
    out = []
    for op, i0, i1, j0, j1 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(escape(sep.join(a[i0:i1])))
            continue
        if i1 > i0:
            out.append(f"<del>{escape(sep.join(a[i0:i1]))}</del>")
        if j1 > j0:
            out.append(f"<ins>{escape(sep.join(b[j0:j1]))}</ins>")
    return sep.join(out)


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


def summary_table(result: SuiteResult) -> str:
    rows = []
    for k, r in enumerate(result.results):
        name, _, *rest = (escape(c) for c in r.summary_cells())
        cells = [f'<a href="#clip{k}">{name}</a>', _badge(r), *rest]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "<table><tr>" + "".join(f"<th>{h}</th>" for h in SUMMARY_COLUMNS) + "</tr>" + "".join(rows) + "</table>"


def clip_section(k: int, r: ClipResult) -> str:
    failures = "".join(f"<li>{escape(f)}</li>" for f in r.failures)
    segments = "".join(f"<tr><td>{s['start']:.2f}</td><td>{s['end']:.2f}</td><td class='text'>"
                       f"{escape(s['text'].strip())}</td></tr>" for s in r.segments)
    return (f'<section id="clip{k}"><h2>{escape(r.name)} {_badge(r)}</h2>'
            f'<p class="muted">{escape(r.audio)} · {escape(r.language)} · {r.duration_s:.2f} s audio · '
            f'{r.summary_cells()[2]} (limit {r.max_error:.2f})</p>'
            f'<p>Why it stopped: <span class="verdict">{escape(r.verdict)}</span></p>'
            + (f"<ul class='fail'>{failures}</ul>" if failures else "")
            + f"<p><b>Transcript</b>: {escape(r.text)}</p>"
            f"<p><b>Against the reference</b> (normalised): {diff_html(r.reference, r.text, r.metric == 'cer')}</p>"
            + (f"<table><tr><th>start s</th><th>end s</th><th>text</th></tr>{segments}</table>" if segments else "")
            + f'<div class="charts">{"".join(charts(r))}</div></section>')


def render(result: SuiteResult) -> str:
    verdict = "PASS" if result.passed else "FAIL"
    meta = " · ".join(f"{escape(str(k))} {escape(str(v))}" for k, v in result.meta.items())
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>QA {escape(result.suite)}: {verdict}</title><style>{STYLE}</style></head><body>"
            f"<h1>QA: {escape(result.suite)} — <span class='{verdict.lower()}'>{verdict}</span> "
            f"({result.n_passed}/{len(result.results)} clips)</h1>"
            f"<p class='muted'>{escape(result.path)}<br>{meta}</p>"
            f"<p class='muted'>RTF is host wall time from sending the audio to the last event, over the "
            f"audio's duration; per-token ms leaves out each window's first step, which carries the prompt.</p>"
            + summary_table(result) + "".join(clip_section(k, r) for k, r in enumerate(result.results))
            + "</body></html>")
