"""Live plot (b): per-token latency, runner-reported against host-observed, with encoder time and TTFT noted."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from app.plots.step import StepPlot
from app.runs.record import RunRecord


class LatencyPlot(StepPlot):
    def __init__(self, parent=None):
        super().__init__("Per-token latency", "ms", parent)
        self.curve = self.plot([], [], pen=pg.mkPen("#2ca02c", width=2), name="runner",
                                      symbol="o", symbolSize=3, symbolBrush="#2ca02c")
        self.host_curve = self.plot([], [], pen=pg.mkPen("#ff7f0e", width=1.5), name="host-observed")
        # A live pass's tokens taken from its draft ran no graph call of their own: marked, so their near-zero
        # ms reads as what it is.
        self.drafted = self.plot([], [], pen=None, symbol="t", symbolSize=7, symbolBrush=None, symbolPen="#7f7f7f")
        self._drafted_in_legend = False
        self.ttft_line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#7f7f7f", width=1),
                                         label="", labelOpts={"position": 0.92, "color": "#555", "anchors": [(0, 0), (0, 0)]})
        self.ttft_line.setVisible(False)
        self.addItem(self.ttft_line, ignoreBounds=True)
        self.enableAutoRange(y=False)
        self._top = 0.0

    def draw(self, run: RunRecord | None) -> None:
        if run is None:
            self.curve.setData([], [])
            self.host_curve.setData([], [])
            self.drafted.setData([], [])
            self._legend_drafted(False)
            self._annotate("", False)
            return
        s = run.series()
        self.curve.setData(s["x"], s["runner_ms"])
        self.host_curve.setData(s["x"], s["host_ms"])
        self.drafted.setData(s["x"][s["drafted"]], s["runner_ms"][s["drafted"]])
        self._legend_drafted(bool(s["drafted"].any()))
        top = nice_ceiling(max(s["runner_ms"].max(initial=0), s["host_ms"].max(initial=0)))
        if top != self._top:  # the y range moves only when a new "nice" ceiling is needed
            self._top = top
            self.setYRange(0, top, padding=0.02)
        self._annotate(annotation(run), bool(run.rows))

    def _legend_drafted(self, shown: bool) -> None:
        """The legend names the draft marks only for a run that has them (a live stream's passes)."""
        if shown != self._drafted_in_legend:
            legend = self.getPlotItem().legend
            if shown:
                legend.addItem(self.drafted, "from the draft")
            else:
                legend.removeItem(self.drafted)
            self._drafted_in_legend = shown

    def _annotate(self, note: str, first_token: bool) -> None:
        # Encoder time and TTFT sit in the title: on the plot they would hide the first, tallest points.
        self.title.set("Per-token latency", note)
        self.ttft_line.setVisible(first_token)
        if first_token:
            self.ttft_line.setPos(0)
            self.ttft_line.label.setFormat("first token (incl. SOT prefix)")


def nice_ceiling(v: float) -> float:
    """The next 1-2-5 step at or above v (at least 10 ms)."""
    if v <= 10:
        return 10.0
    scale = 10 ** math.floor(math.log10(v))
    return next(m * scale for m in (1, 2, 5, 10) if m * scale >= v)


def annotation(run: RunRecord) -> str:
    parts = []
    windows = run.transcript.windows
    if windows and windows[0].cache_hit:
        parts.append("encoder output reused")
    elif run.encoder_ms is not None:
        parts.append(f"encoder {run.encoder_ms / 1e3:.2f} s")
    if run.ttft_ms is not None:
        parts.append(f"TTFT {run.ttft_ms / 1e3:.2f} s")
    # Tokens taken from a live pass's draft ran no graph call (about 0 ms): the median of the steps that did.
    stepped = [r.event.ms for r in run.rows if r.event.step > 0 and not r.event.drafted]
    if stepped:
        parts.append(f"{float(np.median(stepped)):.0f} ms/token")
    drafted = sum(1 for r in run.rows if r.event.drafted)
    if drafted:                    # how many the median leaves out, as Compare says
        parts.append(f"{drafted} from the draft, not counted")
    return " · ".join(parts)
