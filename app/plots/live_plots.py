"""Live mode's graphs two by two, one point per pass: decoder memory used, time per token, the chance the speech
ended at each step of the last pass, and how far each confirmed piece of text trailed the speech.

They redraw one graph per refresher tick, and not at all while the Live tab is hidden (once when it shows)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QWidget

from app.plots.live_refresh import LiveRefresher
from core.stream.events import Committed, PassRecord

MIN_WIDTH, MIN_HEIGHT = 200, 130     # title, axes and a plot area that still reads; two by two, they fit beside
                                     # Live's controls at 1280×800, and the tabs' Enlarge gives them more


def _plot(title: str, x: str, y: str, tip: str) -> pg.PlotWidget:
    p = pg.PlotWidget()
    p.setTitle(title, size="10pt")
    p.setToolTip(tip)
    p.setLabel("bottom", x)
    p.setLabel("left", y)
    p.setMouseEnabled(x=True, y=False)
    p.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)
    return p


class LivePlots(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.cache = _plot("Memory per pass", "pass", "cache positions", "Decoder memory (KV-cache positions) per pass")
        self.cache_bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush="#1f77b4")
        self.cache.addItem(self.cache_bars)
        self.latency = _plot("Time per token", "token, all passes", "ms", "")
        # A legend would cover half of a graph this size: the tooltip says what the two marks are.
        self.latency.setToolTip("Green dots: a decoder step each. Grey triangles: tokens the last pass had already "
                                "found, checked in one batched call with no step of their own (hence about 0 ms).")
        self.latency_curve = self.latency.plot([], [], pen=None, symbol="o", symbolSize=3, symbolBrush="#2ca02c",
                                               symbolPen=None, name="decoder step")
        # A token taken from the draft ran no graph call of its own: its ms is near zero by design, not a glitch.
        self.drafted_curve = self.latency.plot([], [], pen=None, symbol="t", symbolSize=6, symbolBrush=None,
                                               symbolPen="#7f7f7f", name="found by the last pass")
        self.eot = _plot("Chance the speech ended", "token, last pass", "p",
                         "The chance the speech ended at each token of the last pass (p(EOT))")
        self.eot_curve = self.eot.plot([], [], pen=pg.mkPen("#d62728", width=2))
        self.eot.setYRange(0, 1)
        self.lag = _plot("Text behind the speaker", "stream time (s)", "s",
                         "How far each confirmed piece of text trailed the speaker")
        self.lag_curve = self.lag.plot([], [], pen=pg.mkPen("#9467bd", width=1.5), symbol="o", symbolSize=4)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        for i, p in enumerate((self.cache, self.latency, self.eot, self.lag)):
            grid.addWidget(p, i // 2, i % 2)
        self.refresher = LiveRefresher([self._draw_cache, self._draw_latency, self._draw_eot, self._draw_lag], self)
        self._stale = False
        self.clear()

    def clear(self) -> None:
        self.passes: list[PassRecord] = []
        self.commits: list[Committed] = []
        self.redraw()

    def add(self, events: list) -> None:
        passes = [e for e in events if isinstance(e, PassRecord)]
        commits = [e for e in events if isinstance(e, Committed)]
        if not passes and not commits:
            return
        self.passes += passes
        self.commits += commits
        if self.isVisible():
            self.refresher.poke()
        else:
            self._stale = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.refresher.poke()

    def redraw(self) -> None:
        """Every graph now (a new stream, or a test that reads them)."""
        self.refresher.flush()

    def _draw_cache(self) -> None:
        self.cache_bars.setOpts(x=np.arange(len(self.passes)), height=[p.cache_len for p in self.passes])
        step = max(1, -(-len(self.passes) // 6))       # whole passes, about six ticks
        self.cache.getAxis("bottom").setTickSpacing(step, step)

    def _draw_latency(self) -> None:
        ms = np.array([m for p in self.passes for m in p.token_ms], float)
        drafted = np.array([bool(d) for p in self.passes
                            for d in (p.token_drafted or [False] * len(p.token_ms))], bool)
        steps = np.arange(len(ms))
        self.latency_curve.setData(steps[~drafted], ms[~drafted])
        self.drafted_curve.setData(steps[drafted], ms[drafted])

    def _draw_eot(self) -> None:
        last = self.passes[-1].eot_probs if self.passes else []
        self.eot_curve.setData(np.arange(len(last)), last)

    def _draw_lag(self) -> None:
        self.lag_curve.setData([c.emitted_s for c in self.commits], [c.lag_s for c in self.commits])
