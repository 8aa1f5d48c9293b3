"""The left panel changes only what the user touches: the wheel scrolls it without changing an unfocused
combo or spin box, and pressing Transcribe (which disables itself) does not scroll it."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.views.side_panel import SidePanel
from tests.app.conftest import make_window, open_and_wait, settings_file, wait_for


def wheel(widget, steps: int = -3) -> None:
    """A real wheel event at the widget's centre, delivered as the mouse would (to it, then its parents)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def short_window(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    window.resize(1280, 520)           # the left panel no longer fits: it scrolls
    QApplication.processEvents()
    panel = window.findChild(SidePanel)
    assert panel.verticalScrollBar().maximum() > 0
    return window, panel


def test_the_wheel_scrolls_the_panel_and_changes_no_setting(qtbot, tmp_path):
    window, panel = short_window(qtbot, tmp_path)
    controls = window.controls
    before = (controls.language.currentText(), controls.task.currentText(), controls.max_tokens.value())
    for widget in (controls.language, controls.task, controls.max_tokens):
        wheel(widget, -1)
        wheel(widget, +1)
    assert (controls.language.currentText(), controls.task.currentText(), controls.max_tokens.value()) == before
    bar = panel.verticalScrollBar()
    bar.setValue(0)
    wheel(controls.language, -2)
    assert bar.value() > 0, "the wheel over an unfocused combo box scrolls the panel"
    controls.max_tokens.setFocus()
    wait_for(controls.max_tokens.hasFocus, "the spin box to take focus")
    wheel(controls.max_tokens, +1)
    assert controls.max_tokens.value() == before[2] + 1, "a focused spin box still takes the wheel"


def test_pressing_transcribe_does_not_scroll_the_panel(qtbot, tmp_path):
    window, panel = short_window(qtbot, tmp_path)
    open_and_wait(window, "en_asterisk_hello-world.wav")
    controls = window.controls
    controls.max_tokens.setValue(3)
    panel.ensureWidgetVisible(controls.transcribe_button)
    bar = panel.verticalScrollBar()
    at = bar.value()
    moves = []
    bar.valueChanged.connect(moves.append)
    finished = []
    window.runFinished.connect(finished.append)
    controls.transcribe_button.setFocus()
    QTest.mouseClick(controls.transcribe_button, Qt.MouseButton.LeftButton)
    wait_for(lambda: finished, "the run to finish")
    assert not controls.transcribe_button.hasFocus() or controls.transcribe_button.isEnabled()
    assert moves == [] and bar.value() == at
