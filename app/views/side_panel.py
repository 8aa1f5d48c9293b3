"""The left column (audio, run controls, device) in a scroll area that moves only when the user scrolls it
or tabs to a control below the fold, never because a button they pressed was disabled. It scrolls down only:
its controls are laid out to its width, never past its side."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QScrollArea, QVBoxLayout, QWidget

from app.views.wheel_guard import guard_wheel


class SidePanel(QScrollArea):
    def __init__(self, widgets: list[tuple[QWidget, int]], parent=None):
        super().__init__(parent)
        column = QWidget()
        layout = QVBoxLayout(column)
        for widget, stretch in widgets:
            layout.addWidget(widget, stretch)
        self.setWidget(column)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        least = column.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth()
        self.setMinimumWidth(max(390, least))
        self.setMaximumWidth(max(470, least))
        guard_wheel(column)

    def focusNextPrevChild(self, next: bool) -> bool:
        """Qt moves the focus on when the focused button is disabled (Transcribe, once a run starts), and a
        scroll area scrolls to the new focus: keep the view where the user left it in that case."""
        focused = QApplication.focusWidget()
        if focused is None or focused.isEnabled():
            return super().focusNextPrevChild(next)
        return QWidget.focusNextPrevChild(self, next)     # QScrollArea's own would scroll to the new focus
