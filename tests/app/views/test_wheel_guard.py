"""The wheel over a plot scrolls the panel under it and leaves the plot's range alone; Ctrl+wheel zooms the plot.
Over the waveform and the mel it used to zoom all three linked plots, and the speech could vanish."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from tests.app.conftest import open_and_wait
from tests.app.views.test_side_panel import short_window


def wheel(widget, steps: int, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    """A wheel event where the mouse delivers it: to the widget under the pointer, the plot's viewport."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, modifiers, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def x_range(plot) -> tuple[float, float]:
    return tuple(plot.getViewBox().viewRange()[0])


def test_the_wheel_over_the_waveform_scrolls_the_panel_and_ctrl_wheel_zooms(qtbot, tmp_path):
    window, panel = short_window(qtbot, tmp_path)
    open_and_wait(window, "test_en.wav")
    view = window.audio.view
    bar = panel.verticalScrollBar()
    bar.setValue(0)
    before = x_range(view.wave_plot)
    wheel(view.viewport(), -2)
    assert bar.value() > 0, "the wheel over the waveform scrolls the left panel"
    assert x_range(view.wave_plot) == before, "and zooms no plot"
    at = bar.value()
    wheel(view.viewport(), +2, Qt.KeyboardModifier.ControlModifier)
    after = x_range(view.wave_plot)
    assert after[1] - after[0] < before[1] - before[0], "Ctrl+wheel zooms in"
    mel = x_range(view.mel_plot)
    assert mel[1] - mel[0] < before[1] - before[0] and bar.value() == at, "the mel follows, the panel stays"


def test_the_wheel_over_a_graph_zooms_it_only_with_ctrl(qtbot, tmp_path):
    window, _ = short_window(qtbot, tmp_path)
    plot = window.plots.latency
    before = x_range(plot)
    wheel(plot.viewport(), -3)
    assert x_range(plot) == before
    wheel(plot.viewport(), -3, Qt.KeyboardModifier.ControlModifier)
    assert x_range(plot) != before
