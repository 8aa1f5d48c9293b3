"""Live mode's graphs, one point per pass: cache fill, per-token latency, p(EOT) of the last pass, and how far
each commit trailed the speech."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QWidget

from core.stream.events import Committed, PassRecord


def _plot(title: str, x: str, y: str) -> pg.PlotWidget:
    p = pg.PlotWidget()
    p.setTitle(title)
    p.setLabel("bottom", x)
    p.setLabel("left", y)
    p.setMouseEnabled(x=True, y=False)
    return p


class LivePlots(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.cache = _plot("Cache fill per pass", "pass", "positions")
        self.cache_bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush="#1f77b4")
        self.cache.addItem(self.cache_bars)
        self.latency = _plot("Per-token latency, every pass", "step (all passes)", "ms")
        self.latency.addLegend(offset=(-10, 10))
        self.latency_curve = self.latency.plot([], [], pen=None, symbol="o", symbolSize=3, symbolBrush="#2ca02c",
                                               symbolPen=None, name="graph call")
        # A token taken from the draft ran no graph call of its own: its ms is near zero by design, not a glitch.
        self.drafted_curve = self.latency.plot([], [], pen=None, symbol="t", symbolSize=6, symbolBrush=None,
                                               symbolPen="#7f7f7f", name="from the draft")
        self.eot = _plot("p(EOT), last pass", "step", "p")
        self.eot_curve = self.eot.plot([], [], pen=pg.mkPen("#d62728", width=2))
        self.eot.setYRange(0, 1)
        self.lag = _plot("Commit lag", "stream time (s)", "lag (s)")
        self.lag_curve = self.lag.plot([], [], pen=pg.mkPen("#9467bd", width=1.5), symbol="o", symbolSize=4)
        grid = QGridLayout(self)
        for i, p in enumerate((self.cache, self.latency, self.eot, self.lag)):
            grid.addWidget(p, i // 2, i % 2)
        self.clear()

    def clear(self) -> None:
        self.passes: list[PassRecord] = []
        self.commits: list[Committed] = []
        self.redraw()

    def add(self, events: list) -> None:
        self.passes += [e for e in events if isinstance(e, PassRecord)]
        self.commits += [e for e in events if isinstance(e, Committed)]
        self.redraw()

    def redraw(self) -> None:
        self.cache_bars.setOpts(x=np.arange(len(self.passes)), height=[p.cache_len for p in self.passes])
        ms = np.array([m for p in self.passes for m in p.token_ms], float)
        drafted = np.array([bool(d) for p in self.passes
                            for d in (p.token_drafted or [False] * len(p.token_ms))], bool)
        steps = np.arange(len(ms))
        self.latency_curve.setData(steps[~drafted], ms[~drafted])
        self.drafted_curve.setData(steps[drafted], ms[drafted])
        last = self.passes[-1].eot_probs if self.passes else []
        self.eot_curve.setData(np.arange(len(last)), last)
        self.lag_curve.setData([c.emitted_s for c in self.commits], [c.lag_s for c in self.commits])
