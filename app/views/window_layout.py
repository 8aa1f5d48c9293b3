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


def lay_out(window: QMainWindow, left: list[tuple[QWidget, int]], run_picker: QWidget, banner: list[QWidget],
            transcript: QWidget, panes: list[QWidget], tabs: dict[str, QWidget]) -> tuple[QSplitter, QTabWidget]:
    """Builds the window's central widget; returns the right-hand splitter (its state is saved) and the tabs.
    `left`: (widget, stretch) from top to bottom; `banner`: widgets side by side, the first stretching;
    `panes`: the graph panes under the transcript; `tabs`: title → widget."""
    column = QWidget()
    column_layout = QVBoxLayout(column)
    for widget, stretch in left:
        column_layout.addWidget(widget, stretch)
    scroll = QScrollArea()
    scroll.setWidget(column)
    scroll.setWidgetResizable(True)
    scroll.setMinimumWidth(390)
    scroll.setMaximumWidth(470)

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
    splitter.addWidget(tab_widget)
    splitter.setSizes([160, *[560 // max(1, len(panes))] * len(panes), 250])

    central = QSplitter(Qt.Orientation.Horizontal)
    central.addWidget(scroll)
    central.addWidget(splitter)
    central.setStretchFactor(1, 1)
    window.setCentralWidget(central)
    window.resize(1600, 1000)
    return splitter, tab_widget
