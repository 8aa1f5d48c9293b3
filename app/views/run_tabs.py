"""The tabs under the graphs (Tokens, Segments, Compare runs, QA suite, Live, NPU profile), with *Enlarge* at the
tab bar's end: pressed, the graph panes above step aside and the tab has their room (the QA table's rows, the Live
graphs at a size an audience reads); pressed again, they come back as they were. Nothing else moves it.

A tab is laid out to work at its least size, with every control whole: the panes only give it more room to read."""
from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QToolButton, QWidget


class RunTabs(QTabWidget):
    def __init__(self, tabs: dict[str, QWidget], panes: list[QWidget], parent=None):
        super().__init__(parent)
        for title, widget in tabs.items():
            self.addTab(widget, title)
        self.panes = panes
        self.enlarge = QToolButton()
        self.enlarge.setText("Enlarge")
        self.enlarge.setCheckable(True)
        self.enlarge.setAutoRaise(True)
        self.enlarge.setToolTip("Give the tabs the graphs' room above them; press again to bring the graphs back")
        self.enlarge.toggled.connect(self.set_enlarged)
        self.setCornerWidget(self.enlarge)

    def set_enlarged(self, on: bool) -> None:
        for pane in self.panes:
            pane.setVisible(not on)
        if self.enlarge.isChecked() != on:
            self.enlarge.setChecked(on)
