"""Scrolling a panel never changes a setting: a combo box or spin box takes the mouse wheel only once it
has focus (clicked or tabbed into); otherwise the wheel scrolls the panel under it."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget

GUARDED = (QComboBox, QAbstractSpinBox)


class WheelGuard(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, GUARDED) or watched.hasFocus():
            return False
        area = enclosing_scroll_area(watched)
        if area is not None:
            QApplication.sendEvent(area.verticalScrollBar(), event)
        return True


def enclosing_scroll_area(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def guard_wheel(root: QWidget) -> WheelGuard:
    """Install the guard on every combo and spin box under `root` (present now; call again for new ones)."""
    guard = root.findChild(WheelGuard) or WheelGuard(root)
    for widget in root.findChildren(QWidget):
        if isinstance(widget, GUARDED):
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)     # not WheelFocus: the wheel does not focus it
            widget.installEventFilter(guard)
    return guard
