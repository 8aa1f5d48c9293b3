"""doctor.html: one self-contained page a tester attaches to a bug: each rung with its mark and figures, and each
clip's two transcripts (the board's, the PC's reference) side by side, token by token, the first difference
marked."""
from __future__ import annotations

import html
import json

from device.doctor.checkup import MARKS

CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:0 0 1.5em}td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}
th{background:#f3f3f3;text-align:left}.pass{color:#1a7f37}.warn{color:#9a6700}.fail{color:#cf222e}
.not-run{color:#888}pre{margin:0;white-space:pre-wrap;font-size:12px}.tok{display:inline-block;margin:1px;
padding:0 2px;border-radius:3px;background:#f0f0f0}.part{background:#ffd8d8;outline:2px solid #cf222e}
.after{background:#fff3c4}h2{margin-top:1.5em}"""


def _e(x) -> str:
    return html.escape(str(x))


def _rung_rows(rungs: list[dict]) -> str:
    rows = []
    for r in rungs:
        figures = dict(r.get("figures") or {})
        decided, notes = figures.pop("decided_by", ""), figures.pop("warnings", [])
        notes = "".join(f"<br>! {_e(n)}" for n in notes)
        fix = f"<br><b>fix:</b> {_e(r['fix'])}" if r.get("fix") else ""
        figures = json.dumps(figures, indent=1, ensure_ascii=False)
        rows.append(f"<tr><td class='{r['status']}'>{MARKS[r['status']]} {_e(r['status'])}</td><td>{_e(r['name'])}"
                    f"</td><td>{_e(decided)}{notes}{fix}</td>"
                    f"<td><details><summary>figures</summary><pre>{_e(figures)}</pre></details></td></tr>")
    return "".join(rows)


def _tokens(pieces: list[str], part: int | None) -> str:
    out = []
    for i, p in enumerate(pieces):
        cls = "tok part" if i == part else "tok after" if part is not None and i > part else "tok"
        out.append(f"<span class='{cls}' title='step {i}'>{_e(p)}</span>")
    return "".join(out) or "<i>no tokens</i>"


def _clips(runs: dict) -> str:
    parts = []
    for name, run in runs.items():
        b, p, part = run["board"], run["pc"], run.get("first_difference")
        where = "the same tokens" if part is None else f"first difference at step {part}"
        parts.append(f"<h3>{_e(name)}: {where}</h3><table><tr><th>the board</th><th>this PC (NumPy reference)</th>"
                     f"</tr><tr><td>{_e(b['text'])}</td><td>{_e(p['text'])}</td></tr>"
                     f"<tr><td>{_tokens(b.get('pieces') or [], part)}</td>"
                     f"<td>{_tokens(p.get('pieces') or [], part)}</td></tr></table>")
    return "".join(parts) or "<p>No clip was decoded (the ladder stopped before the tokens rung).</p>"


def render(doc: dict, runs: dict) -> str:
    """The page for a doctor report (the --json document) and its clips' runs."""
    failed = next((r for r in doc["rungs"] if r["status"] == "fail"), None)
    named = next((r["figures"].get("named") for r in doc["rungs"] if r["name"] == "identity"), None)
    head = (f"stopped at <b class='fail'>{_e(failed['name'])}</b>: {_e(failed['figures'].get('decided_by'))}"
            if failed else "every rung passed or warned")
    what = f" ({_e(named)})" if named else ""
    bundle = _e(doc.get("bundle") or "the installed weights")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>whisperkv doctor: {_e(doc['device'])}"
            f"</title><style>{CSS}</style></head><body><h1>whisperkv doctor</h1><p>device <b>{_e(doc['device'])}</b>"
            f"{what} · bundle <b>{bundle}</b> · {head}</p>"
            f"<h2>Rungs</h2><table><tr><th></th><th>rung</th><th>what decided it</th><th></th></tr>"
            f"{_rung_rows(doc['rungs'])}</table><h2>Transcripts</h2>{_clips(runs)}</body></html>")
