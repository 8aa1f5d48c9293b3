"""Live plot (b): per-token latency, runner-reported against host-observed, with encoder time and TTFT noted."""
from __future__ import annotations

import pyqtgraph as pg

from app.run_record import RunRecord
from app.step_plot import StepPlot


class LatencyPlot(StepPlot):
    def __init__(self, parent=None):
        super().__init__("Per-token latency", "ms", parent)
        self.curve = self.plot([], [], pen=pg.mkPen("#2ca02c", width=2), name="runner ms",
                                      symbol="o", symbolSize=3, symbolBrush="#2ca02c")
        self.host_curve = self.plot([], [], pen=pg.mkPen("#ff7f0e", width=1.5), name="host-observed ms")
        self.note = pg.TextItem("", anchor=(0, 0), color="#333", fill=pg.mkBrush(255, 255, 255, 200))
        self.note.setZValue(5)
        self.addItem(self.note, ignoreBounds=True)
        self.getViewBox().sigRangeChanged.connect(self._place_note)

    def draw(self, run: RunRecord | None) -> None:
        if run is None:
            self.curve.setData([], [])
            self.host_curve.setData([], [])
            self.note.setText("")
            return
        s = run.series()
        self.curve.setData(s["x"], s["runner_ms"])
        self.host_curve.setData(s["x"], s["host_ms"])
        self.note.setText(annotation(run))
        self._place_note()

    def _place_note(self, *_):
        (x0, _x1), (_y0, y1) = self.getViewBox().viewRange()
        self.note.setPos(x0, y1)


def annotation(run: RunRecord) -> str:
    parts = []
    if run.encoder_ms is not None:
        parts.append(f"encoder {run.encoder_ms:.0f} ms")
    if run.ttft_ms is not None:
        parts.append(f"time to first token {run.ttft_ms:.0f} ms")
    per_token = run.decode_ms_per_token()
    if per_token is not None:
        parts.append(f"median {per_token:.1f} ms/token")
    return "\n".join(parts)
