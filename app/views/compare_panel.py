"""Compare tab: every run of the session listed; two overlaid per-token latency curves and the speed-up."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.runs.compare import compare, same_clip_pair, warm_up_ms
from app.runs.session import Session

COLORS = ("#1f77b4", "#d62728")
PLOT_MIN_HEIGHT = 150       # its axes, title and legend apart (it was squeezed to 60 px, labels over each other)


class ComparePanel(QWidget):
    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.a = QComboBox()
        self.b = QComboBox()
        self.verdict = QLabel("Run the same audio twice (e.g. cache on, then cache off) to compare.")
        self.verdict.setWordWrap(True)
        self.verdict.setStyleSheet("font-size: 11pt; font-weight: bold; padding: 4px;")
        self.plot = pg.PlotWidget(title="Runner ms per token")
        self.plot.setLabel("bottom", "decode step")
        self.plot.setLabel("left", "ms")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.addLegend(offset=(-10, 10))
        self.plot.setMinimumHeight(PLOT_MIN_HEIGHT)
        self.curves = [self.plot.plot([], [], pen=pg.mkPen(c, width=2)) for c in COLORS]
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Run A"))
        pick.addWidget(self.a, 1)
        pick.addWidget(QLabel("Run B"))
        pick.addWidget(self.b, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(pick)
        layout.addWidget(self.verdict)
        layout.addWidget(self.plot, 1)
        self.a.currentIndexChanged.connect(self.redraw)
        self.b.currentIndexChanged.connect(self.redraw)

    def refresh_runs(self) -> None:
        """Relist the session's runs, keeping the choice or defaulting to the last run and the latest earlier
        run of the same audio (else the last two)."""
        keep = (self.a.currentData(), self.b.currentData())
        for combo in (self.a, self.b):
            combo.blockSignals(True)
            combo.clear()
            for run in self.session.runs:
                combo.addItem(run.label(), run.id)
        ids = [r.id for r in self.session.runs]
        a, b = keep
        if a not in ids or b not in ids or a == b:
            a, b = same_clip_pair(self.session.runs) or ((ids[-2], ids[-1]) if len(ids) >= 2 else
                                                         (ids[-1] if ids else None, ids[-1] if ids else None))
        for combo, want in ((self.a, a), (self.b, b)):
            combo.setCurrentIndex(max(0, combo.findData(want)))
            combo.blockSignals(False)
        self.redraw()

    def choose(self, a_id: int, b_id: int) -> None:
        self.a.setCurrentIndex(self.a.findData(a_id))
        self.b.setCurrentIndex(self.b.findData(b_id))
        self.redraw()

    def _scale(self, runs: list) -> None:
        """A one-off warm-up step (hundreds of times the others) flattens a linear axis: log it, and say so."""
        log = any(warm_up_ms(r) for r in runs)
        self.plot.setLogMode(y=log)
        self.plot.setTitle("Runner ms per token" + (" (log scale: a run includes a one-off warm-up)" if log else ""))

    def redraw(self) -> None:
        runs = [self.session.by_id(c.currentData()) for c in (self.a, self.b)]
        legend = self.plot.plotItem.legend
        legend.clear()
        for curve, run, name in zip(self.curves, runs, "AB"):
            if run is None:
                curve.setData([], [])
                continue
            s = run.series()
            ran = ~s["drafted"]        # a token served from a draft ran no graph: not a figure of the runner's speed
            curve.setData(s["x"][ran], s["runner_ms"][ran])
            live = " live" if run.live is not None else ""
            legend.addItem(curve, f"{name}: #{run.id}{live} cache {'on' if run.options.cache else 'off'}")
        self._scale([r for r in runs if r is not None])
        if all(runs) and runs[0] is not runs[1]:
            self.verdict.setText(compare(*runs).sentence())
        elif len(self.session.runs) < 2:
            self.verdict.setText("Run the same audio twice (e.g. cache on, then cache off) to compare.")
