"""The Neuron runtime profiler's reports, read: per-op (or per-layer) time for each graph, as the CLI, the studio
and QA show it.

A report (device/runner/neuron/npu_profile.py writes one a graph, `encoder.csv`, `decoder_step.csv`) is several CSV
tables, each a title line, a subheader "Total Execution Time: T ms over N times inference." and the columns
Time, Ratio, ExeTimes, Time/Inf., Description, GraphIdx, ExeIdx (MediaTek's Neuron profiler documentation).
Lower levels include the calls of higher ones, so the finest breakdown is the table with the most rows, leaving out
the execution-history tables (their rows carry an ExeIdx). The real runtime's titles and levels must be checked on
a board; only the documented columns are relied on here.
"""
from __future__ import annotations

import csv
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

_WINDOW = re.compile(r"^w\d+-")
_LEVEL = re.compile(r"LEVEL\s*(\d+)", re.IGNORECASE)
_TOTAL = re.compile(r"Total Execution Time:\s*([0-9.eE+-]+)\s*ms over\s*([0-9]+)", re.IGNORECASE)


@dataclass
class Table:
    title: str
    total_ms: float = 0.0
    inferences: int = 0
    rows: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class OpTime:
    name: str
    ms: float            # per inference
    share: float         # of the graph's time


@dataclass
class GraphProfile:
    graph: str           # the report's name: encoder, decoder_step (one step), delegate
    inferences: int
    ms_per_inference: float
    ops: list[OpTime]    # slowest first
    table: str           # the title of the table the ops come from


def read_tables(text: str) -> list[Table]:
    """Every table of one report, in its order."""
    tables: list[Table] = []
    header: list[str] | None = None
    for line in text.splitlines():
        cells = next(csv.reader([line])) if line.strip() else []
        if not cells:
            header = None
        elif m := _TOTAL.search(line):
            if tables:
                tables[-1].total_ms, tables[-1].inferences = float(m.group(1)), int(m.group(2))
        elif "Time" in cells and "Description" in cells:
            header = [c.strip() for c in cells]
        elif header is not None and tables:
            tables[-1].rows.append(dict(zip(header, (c.strip() for c in cells))))
        else:
            tables.append(Table(line.strip()))
    return tables


def _number(s: str | None) -> float:
    try:
        return float(s)
    except (TypeError, ValueError):
        return 0.0


def finest(tables: list[Table]) -> Table | None:
    """The table with the most rows that is not an execution history; of equals, the deepest LEVEL in its title."""
    candidates = [t for t in tables if t.rows and not any(r.get("ExeIdx") for r in t.rows)]
    level = lambda t: int(m.group(1)) if (m := _LEVEL.search(t.title)) else 0  # noqa: E731
    return max(candidates, key=lambda t: (len(t.rows), level(t)), default=None)


def graph_profile(graph: str, reports: list[str]) -> GraphProfile | None:
    """One graph's reports (one a request: a window's encoder, its decode's steps) merged: each op's time summed
    and divided by the inferences of them all. None when no report has a breakdown."""
    times: dict[str, float] = {}
    total, inferences, title = 0.0, 0, ""
    for text in reports:
        table = finest(read_tables(text))
        if table is None:
            continue
        title = table.title
        runs = table.inferences or max((int(_number(r.get("ExeTimes"))) for r in table.rows), default=1)
        total += table.total_ms or sum(_number(r.get("Time")) for r in table.rows)
        inferences += runs
        for r in table.rows:
            name = r.get("Description") or "?"
            times[name] = times.get(name, 0.0) + _number(r.get("Time"))
    if not inferences:
        return None
    ops = sorted((OpTime(n, t / inferences, t / total if total else 0.0) for n, t in times.items()),
                 key=lambda o: -o.ms)
    return GraphProfile(graph, inferences, total / inferences, ops, title)


def profiles(files: list[tuple[str, str]]) -> list[GraphProfile]:
    """(file name, text) pairs, any number of requests' worth, as one profile a graph: encoder first."""
    by_graph: dict[str, list[str]] = {}
    for name, text in files:
        graph = _WINDOW.sub("", Path(name).name).removesuffix(".csv")     # w00-encoder.csv: as write_reports saved it
        by_graph.setdefault(graph, []).append(text)
    order = {"encoder": 0, "decoder_step": 1, "decoder_step_attention": 2}
    out = [graph_profile(g, texts) for g, texts in sorted(by_graph.items(), key=lambda kv: order.get(kv[0], 2))]
    return [p for p in out if p is not None]


def label(graph: str) -> str:
    return {"encoder": "encoder (one window)", "decoder_step": "decoder step (one token)",
            "decoder_step_attention": "decoder step with attention (one token)"}.get(graph, graph)


def profile_text(found: list[GraphProfile], top: int = 10) -> str:
    """The CLI's table: each graph's slowest ops, per inference."""
    lines = []
    for p in found:
        lines.append(f"{label(p.graph)}: {p.ms_per_inference:.2f} ms an inference over {p.inferences} "
                     f"({len(p.ops)} rows of {p.table!r})")
        for o in p.ops[:top]:
            lines.append(f"  {o.ms:9.3f} ms  {o.share:6.1%}  {o.name}")
        if len(p.ops) > top:
            rest = sum(o.ms for o in p.ops[top:])
            lines.append(f"  {rest:9.3f} ms  {rest / p.ms_per_inference if p.ms_per_inference else 0:6.1%}  "
                         f"the other {len(p.ops) - top}")
    return "\n".join(lines)


def write_reports(reports: list[dict], folder: str | Path) -> list[Path]:
    """The reports as they came (Decoder.npu_reports), one file each: `w00-encoder.csv` is window 0's encoder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for r in reports:
        for f in r["files"]:
            path = folder / f"w{r['window']:02d}-{Path(f['name']).name}"
            path.write_text(f["text"])
            written.append(path)
    return written


def to_json(found: list[GraphProfile]) -> list[dict]:
    return [asdict(p) for p in found]
