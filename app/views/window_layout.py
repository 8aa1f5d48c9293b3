"""Where the main window's widgets sit: input panels on the left; on the right the run picker, stop banner
(the window-quality signals beside it) and transcript, above the attention heatmap, above the live graphs,
above the tabs."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.views.side_panel import SidePanel
from app.views.wheel_guard import guard_wheel
from app.views.window_size import fit_to_screen

PANE_MIN_HEIGHT = 170      # a graph keeps its title, axes and legend readable
TABS_MIN_HEIGHT = 140
SIDE_NARROW, SIDE_WIDE, WIDE_WINDOW = 390, 470, 1500


def lay_out(window: QMainWindow, left: list[tuple[QWidget, int]], run_picker: QWidget, banner: list[QWidget],
            transcript: QWidget, panes: list[QWidget], tabs: dict[str, QWidget]) -> tuple[QSplitter, QTabWidget]:
    """Builds the window's central widget; returns the right-hand splitter (its state is saved) and the tabs.
    `left`: (widget, stretch) from top to bottom; `banner`: widgets side by side, the first stretching;
    `panes`: the graph panes under the transcript; `tabs`: title → widget."""
    scroll = SidePanel(left)

    header = QHBoxLayout()
    header.addWidget(QLabel("Run:"))
    header.addWidget(run_picker, 1)
    top = QWidget()
    top_layout = QVBoxLayout(top)
    top_layout.setContentsMargins(0, 0, 0, 0)
    top_layout.addLayout(header)
    banner_row = QHBoxLayout()
    for k, widget in enumerate(banner):
        banner_row.addWidget(widget, 0 if k else 1)
    top_layout.addLayout(banner_row)
    top_layout.addWidget(transcript, 1)
    tab_widget = QTabWidget()
    for title, widget in tabs.items():
        tab_widget.addTab(widget, title)
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(top)
    for pane in panes:
        splitter.addWidget(pane)
    splitter.addWidget(scrolled(tab_widget))   # a tall tab (QA, Live) scrolls rather than squeezing the graphs
    for pane in panes:
        pane.setMinimumHeight(PANE_MIN_HEIGHT)

    guard_wheel(splitter)     # the wheel over a graph or a tab's control scrolls; Ctrl+wheel zooms a graph
    central = QSplitter(Qt.Orientation.Horizontal)
    central.addWidget(scroll)
    central.addWidget(splitter)
    central.setStretchFactor(1, 1)
    window.setCentralWidget(central)
    fit_to_screen(window)
    share_space(window, central, splitter)
    return splitter, tab_widget


def scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    return area


def share_space(window: QMainWindow, central: QSplitter, right: QSplitter) -> None:
    """The first sizes, for the window's size: the side panel narrow on a small screen, the graph panes an
    equal share of the height left after the transcript and the tabs."""
    left = SIDE_NARROW if window.width() < WIDE_WINDOW else SIDE_WIDE
    central.setSizes([left, window.width() - left])
    n_panes = right.count() - 2
    height = window.height() - 60                   # the menu and status bars
    tabs = max(TABS_MIN_HEIGHT, height // 4)
    top = max(right.widget(0).minimumSizeHint().height(), height // 5)
    pane = max(PANE_MIN_HEIGHT, (height - tabs - top) // max(1, n_panes))
    right.setSizes([top, *[pane] * n_panes, tabs])
