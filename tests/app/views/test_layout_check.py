"""The layout checker the X test runs (layout_check.py) finds each fault it names, in a window made to have it, and
nothing in one laid out well: so the X test's empty lists mean something."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from tests.app.views.layout_check import problems


def shown(window: QWidget, width: int = 400, height: int = 300) -> list[str]:
    window.resize(width, height)
    window.show()
    QApplication.processEvents()
    return problems(window)


def test_a_window_laid_out_well_has_no_fault(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    layout.addWidget(QPushButton("Run suite"))
    layout.addWidget(QLabel("a label with room"))
    assert shown(window) == []


def test_a_squeezed_button_and_a_cut_label_are_found(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    button = QPushButton("Live: loaded file at 1×", window)
    button.setGeometry(0, 0, 60, 12)                # as the Live tab's buttons were: 12 px tall, label cut
    label = QLabel("a status line far too long for the room it was given", window)
    label.setGeometry(0, 20, 80, 20)
    faults = shown(window)
    assert any("Live: loaded file" in f and "below its least" in f for f in faults), faults
    assert any("Live: loaded file" in f and "label needs" in f for f in faults), faults
    assert any("a status line" in f and "text needs" in f for f in faults), faults


def test_a_control_off_the_window_or_sideways_past_its_scroll_area_is_found(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    QPushButton("Browse…", window).setGeometry(380, 0, 80, 30)     # past the right edge of a 400 px window
    area = QScrollArea(window)
    area.setGeometry(0, 50, 200, 200)
    page = QWidget()
    page.resize(400, 600)
    QPushButton("Record", page).setGeometry(250, 10, 80, 30)      # sideways past the area: a fault
    QPushButton("Deploy", page).setGeometry(10, 500, 80, 30)      # below its fold: the user scrolls to it
    area.setWidget(page)
    faults = shown(window)
    assert any("Browse" in f and "outside the window" in f for f in faults), faults
    assert any("Record" in f and "sideways past its scroll area" in f for f in faults), faults
    assert not any("Deploy" in f for f in faults), faults


def test_a_scroll_area_inside_a_scroll_area_is_found(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    area = QScrollArea()
    page = QWidget()
    QVBoxLayout(page).addWidget(QPlainTextEdit())
    area.setWidget(page)
    area.setWidgetResizable(True)
    QVBoxLayout(window).addWidget(area)
    faults = shown(window)
    assert any(f.startswith("QPlainTextEdit") and "a scroll area inside QScrollArea" in f for f in faults), faults
