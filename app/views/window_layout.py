"""Where the main window's widgets sit: input panels on the left; on the right the run picker, stop banner
and transcript above the live graphs, above the tabs."""
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


def lay_out(window: QMainWindow, left: list[tuple[QWidget, int]], run_picker: QWidget, banner: QWidget,
            transcript: QWidget, plots: QWidget, tabs: dict[str, QWidget]) -> tuple[QSplitter, QTabWidget]:
    """Builds the window's central widget; returns the right-hand splitter (its state is saved) and the tabs.
    `left`: (widget, stretch) from top to bottom; `tabs`: title → widget."""
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
    top_layout.addWidget(banner)
    top_layout.addWidget(transcript, 1)
    tab_widget = QTabWidget()
    for title, widget in tabs.items():
        tab_widget.addTab(widget, title)
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(top)
    splitter.addWidget(plots)
    splitter.addWidget(tab_widget)
    splitter.setSizes([170, 380, 300])

    central = QSplitter(Qt.Orientation.Horizontal)
    central.addWidget(scroll)
    central.addWidget(splitter)
    central.setStretchFactor(1, 1)
    window.setCentralWidget(central)
    window.resize(1600, 1000)
    return splitter, tab_widget
