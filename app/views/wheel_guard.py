"""Scrolling a panel never changes a setting: a combo box or spin box takes the mouse wheel only once it
has focus (clicked or tabbed into); otherwise the wheel scrolls the panel under it. Nor does it zoom a plot by
chance: over a plot (the waveform, the mel, a graph) the wheel scrolls the panel under it, and Ctrl+wheel zooms
the plot (the waveform, the mel and the heatmap follow each other's zoom)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget

GUARDED = (QComboBox, QAbstractSpinBox)


class WheelGuard(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel:
            return False
        if isinstance(watched, GUARDED):
            if watched.hasFocus():
                return False
            return self._scroll(watched, event)
        plot = watched if isinstance(watched, pg.GraphicsView) else watched.parentWidget()
        if not isinstance(plot, pg.GraphicsView) or event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False                              # Ctrl+wheel: the plot zooms
        return self._scroll(plot, event)

    def _scroll(self, widget: QWidget, event: QEvent) -> bool:
        """The wheel scrolls the panel under `widget` (where there is none, nothing moves)."""
        area = enclosing_scroll_area(widget)
        if area is not None:
            QApplication.sendEvent(area.verticalScrollBar(), event)
        return True


def enclosing_scroll_area(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def guard_wheel(root: QWidget) -> WheelGuard:
    """Install the guard on every combo box, spin box and plot under `root` (present now; call again for new
    ones)."""
    guard = root.findChild(WheelGuard) or WheelGuard(root)
    for widget in root.findChildren(QWidget):
        if isinstance(widget, GUARDED):
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)     # not WheelFocus: the wheel does not focus it
            widget.installEventFilter(guard)
        elif isinstance(widget, pg.GraphicsView):
            widget.installEventFilter(guard)
            widget.viewport().installEventFilter(guard)           # where the mouse's wheel events arrive
    return guard
