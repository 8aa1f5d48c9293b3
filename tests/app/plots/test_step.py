"""A graph's hover label names the step under the mouse, and goes when the mouse leaves the graph."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF
from PySide6.QtWidgets import QApplication

from app.plots.latency import LatencyPlot
from app.runs.session import Session
from core.decode.events import EncodedEvent
from tests.app.runs.test_exports import make_run, token


def test_the_hover_label_leaves_with_the_mouse(qtbot):
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    plot.set_run(make_run(Session(), [EncodedEvent(0, 900.0, "en")] + [token(0, i, 100 + i, " a") for i in range(8)]))
    QApplication.processEvents()
    at = plot.plotItem.vb.mapViewToScene(QPointF(3, 10))
    plot._on_mouse_moved(at)
    assert plot.hover_label.isVisible() and "a" in plot.hover_label.toPlainText()
    QApplication.sendEvent(plot, QEvent(QEvent.Type.Leave))
    assert not plot.hover_label.isVisible()
