"""Live plot (a): KV-cache fill in positions against the cache ceiling, with MB on the right axis; the title
puts the self K/V in use beside the cross-attention cache the step also reads (cross K/V, or F when absorbed)."""
from __future__ import annotations

import pyqtgraph as pg

from app.plots.scaled_axis import ScaledAxis
from app.plots.step import StepPlot
from app.runs.compare import cross_text
from app.runs.record import RunRecord
from core.model.dims import ModelDims


class CachePlot(StepPlot):
    def __init__(self, parent=None):
        dims = ModelDims()
        self.mb_axis = ScaledAxis(dims.cache_bytes_per_token() / 1e6, "right")
        super().__init__("KV-cache fill", "cache_len (positions)", parent, right=self.mb_axis)
        self.showAxis("right")
        self.mb_axis.setWidth(48)  # fixed: auto width lags a frame behind and can clip the label
        self.setLabel("right", "self K/V (MB)")
        self.curve = self.plot([], [], pen=pg.mkPen("#1f77b4", width=2), name="cache_len",
                               symbol="o", symbolSize=3, symbolBrush="#1f77b4")
        self.ceiling = pg.InfiniteLine(angle=0, movable=False,
                                       pen=pg.mkPen("#d62728", width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine),
                                       label="", labelOpts={"position": 0.18, "color": "#d62728"})
        self.addItem(self.ceiling)
        self.setMouseEnabled(x=True, y=False)
        self._show_ceiling(dims.n_text_ctx)

    def _show_ceiling(self, ceiling: int) -> None:
        if self.ceiling.value() == ceiling:
            return
        self.ceiling.setPos(ceiling)
        self.ceiling.label.setFormat(f"ceiling {ceiling}")
        self.setYRange(0, ceiling * 1.05, padding=0)

    def draw(self, run: RunRecord | None) -> None:
        if run is None:
            self.curve.setData([], [])
            return
        s = run.series()
        title = "KV-cache fill" if run.options.cache else "Positions (cache off: no cache kept)"
        cross = cross_text(run)
        if cross:
            self_mb = s["cache_mb"][-1] if len(s["cache_mb"]) else 0.0
            title += f" · self K/V {self_mb:.2f} MB + {cross}" if run.options.cache else f" · {cross}"
        self.title.set(title)
        self._show_ceiling(run.cache_ceiling())
        self.mb_axis.set_scale(run.bytes_per_token() / 1e6)
        self.curve.setData(s["x"], s["cache_len"])
