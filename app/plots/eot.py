"""Live plot (c): p(EOT) per step on a log scale — how close the decoder was to stopping."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from app.plots.step import StepPlot
from app.runs.record import RunRecord

FLOOR = 1e-12  # log scale: a probability that underflowed to 0 is drawn at the floor


class EotPlot(StepPlot):
    def __init__(self, parent=None):
        super().__init__("p(EOT) per step", "p(EOT)", parent)
        self.setLogMode(x=False, y=True)
        self.curve = self.plot([], [], pen=pg.mkPen("#9467bd", width=2), name="p(EOT)",
                               symbol="o", symbolSize=3, symbolBrush="#9467bd")
        half = pg.InfiniteLine(pos=np.log10(0.5), angle=0, movable=False,
                               pen=pg.mkPen("#888", style=pg.QtCore.Qt.PenStyle.DotLine))
        self.addItem(half, ignoreBounds=True)
        self.setYRange(np.log10(FLOOR), 0.2, padding=0)  # fixed: the whole scale of p(EOT) is the story
        self.enableAutoRange(y=False)

    def draw(self, run: RunRecord | None) -> None:
        if run is None:
            self.curve.setData([], [])
            return
        s = run.series()
        self.curve.setData(s["x"], np.clip(s["eot_prob"], FLOOR, 1.0))
