"""Where the main window's widgets sit: input panels on the left (they scroll down, never sideways), with the
device's own report under them; on the right the run picker, stop banner (the window-quality signals beside it)
and transcript, above the live graphs, above the tabs (the attention heatmap is the first), in one splitter the
user drags. No scroll area holds another: a tab is laid out to fit its least size, and *Enlarge* gives it the graphs'
room (app/views/run_tabs.py)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.views.run_tabs import RunTabs
from app.views.side_panel import SidePanel
from app.views.wheel_guard import guard_wheel
from app.views.window_size import fit_to_screen

PANE_MIN_HEIGHT = 170      # a graph keeps its title, axes and legend readable
SIDE_NARROW, SIDE_WIDE, WIDE_WINDOW = 390, 470, 1500


def lay_out(window: QMainWindow, left: list[tuple[QWidget, int]], run_picker: QWidget, banner: list[QWidget],
            transcript: QWidget, panes: list[QWidget], tabs: dict[str, QWidget],
            under_left: QWidget | None = None) -> tuple[QSplitter, QTabWidget]:
    """Builds the window's central widget; returns the right-hand splitter (its state is saved) and the tabs.
    `left`: (widget, stretch) from top to bottom; `under_left`: a box that scrolls itself, kept under the left
    panel rather than in it; `banner`: widgets side by side, the first stretching; `panes`: the graph panes under
    the transcript; `tabs`: title → widget."""
    column = QWidget()
    column_layout = QVBoxLayout(column)
    column_layout.setContentsMargins(0, 0, 0, 0)
    column_layout.addWidget(SidePanel(left), 1)
    if under_left is not None:
        column_layout.addWidget(under_left)

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
    tab_widget = RunTabs(tabs, panes)
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(top)
    for pane in panes:
        splitter.addWidget(pane)
        pane.setMinimumHeight(PANE_MIN_HEIGHT)
    splitter.addWidget(tab_widget)
    splitter.setChildrenCollapsible(False)     # a pane dragged small stops at its least size, never vanishes

    guard_wheel(splitter)     # the wheel over a graph or a tab's control scrolls; Ctrl+wheel zooms a graph
    central = QSplitter(Qt.Orientation.Horizontal)
    central.addWidget(column)
    central.addWidget(splitter)
    central.setStretchFactor(1, 1)
    central.setChildrenCollapsible(False)
    window.setCentralWidget(central)
    fit_to_screen(window)
    share_space(window, central, splitter)
    return splitter, tab_widget


def share_space(window: QMainWindow, central: QSplitter, right: QSplitter) -> None:
    """The first sizes, for the window's size: the side panel narrow on a small screen, the graph panes an
    equal share of the height left after the transcript and the tabs."""
    left = SIDE_NARROW if window.width() < WIDE_WINDOW else SIDE_WIDE
    central.setSizes([left, window.width() - left])
    n_panes = right.count() - 2
    height = window.height() - 60                   # the menu and status bars
    tabs = max(right.widget(right.count() - 1).minimumSizeHint().height(), height * 2 // 5)
    top = max(right.widget(0).minimumSizeHint().height(), height // 5)
    pane = max(PANE_MIN_HEIGHT, (height - tabs - top) // max(1, n_panes))
    right.setSizes([top, *[pane] * n_panes, tabs])
