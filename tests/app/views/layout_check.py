"""What a user would call a broken layout, read from a shown window's widgets (tests/app/views/layout_probe.py runs it
on a real X server, tab by tab):

- a control outside the window, outside the widget that holds it, or sideways past the scroll area it sits in (below
  the fold of a scroll area that scrolls down is fine: the user scrolls to it);
- a control below its least size (its minimum size hint, or the least size set on it), or a label, a button's or a
  tab's text cut;
- a scroll area inside a scroll area (any widget that can show a scroll bar inside one that can).
"""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QProgressBar,
    QScrollArea,
    QScrollBar,
    QSplitterHandle,
    QTabBar,
    QWidget,
)

CONTROLS = (QAbstractButton, QComboBox, QLineEdit, QAbstractSpinBox, QLabel, QProgressBar, QAbstractScrollArea,
            QTabBar)
OFF = Qt.ScrollBarPolicy.ScrollBarAlwaysOff


def name(w: QWidget) -> str:
    text = ""
    for get in ("text", "currentText", "title", "placeholderText"):
        if hasattr(w, get):
            value = getattr(w, get)()
            if isinstance(value, str) and value:
                text = value
                break
    label = w.objectName() or type(w).__name__
    return f"{label} {text[:40]!r}" if text else label


def scrolls(w: QWidget) -> bool:
    """A widget that can show a scroll bar of its own (a plot's view has both turned off)."""
    return isinstance(w, QAbstractScrollArea) and (w.horizontalScrollBarPolicy() != OFF
                                                   or w.verticalScrollBarPolicy() != OFF)


def _inner(w: QWidget) -> bool:
    """A widget that is part of another control (a combo's line edit, a table's header, a spin box's edit, a tab
    bar's arrows, a scroll bar), judged with its owner."""
    parent = w.parentWidget()
    while parent is not None:
        if isinstance(parent, (QComboBox, QAbstractSpinBox, QTabBar, QAbstractScrollArea)) \
                and not isinstance(parent, QScrollArea):
            return True
        parent = parent.parentWidget()
    return isinstance(w, (QScrollBar, QSplitterHandle))


def shown_controls(window: QWidget) -> list[QWidget]:
    return [w for w in window.findChildren(QWidget) if isinstance(w, CONTROLS) and w.isVisible()
            and w.window() is window and not _inner(w)
            and not (isinstance(w, QLabel) and not w.text() and w.pixmap().isNull())]


def outside(w: QWidget, window: QWidget) -> str | None:
    """Where `w` leaves what holds it: the window, a parent, or a scroll area's sides."""
    rect = QRect(w.rect())
    child, parent = w, w.parentWidget()
    while parent is not None:
        rect = QRect(child.mapTo(parent, rect.topLeft()), rect.size())
        room = parent.rect()
        area = parent.parentWidget()
        if isinstance(area, QScrollArea) and parent is area.viewport():
            if rect.left() < room.left() - 1 or rect.right() > room.right() + 1:
                return f"sideways past its scroll area ({rect.left()}..{rect.right()} in 0..{room.right()})"
        elif not room.adjusted(-1, -1, 1, 1).contains(rect):
            holder = "the window" if parent is window else name(parent)
            return f"outside {holder}: {rect.getRect()} in {room.getRect()}"
        rect = rect.intersected(room)       # what a scroll area holds below its fold is not on screen there
        if parent is window or rect.isEmpty():
            return None
        child, parent = parent, parent.parentWidget()
    return None


def least(w: QWidget) -> tuple[int, int]:
    """The least size a layout owes the widget: the size set on it, else its minimum size hint."""
    hint, set_ = w.minimumSizeHint(), w.minimumSize()
    return (set_.width() or max(0, hint.width()), set_.height() or max(0, hint.height()))


def squeezed(w: QWidget) -> str | None:
    least_w, least_h = least(w)
    policy = w.sizePolicy()
    if policy.horizontalPolicy() == policy.Policy.Ignored:
        least_w = 0
    if policy.verticalPolicy() == policy.Policy.Ignored:
        least_h = 0
    if w.width() < least_w or w.height() < least_h:
        return f"{w.width()}x{w.height()}, below its least {least_w}x{least_h}"
    return None


def cut(w: QWidget) -> str | None:
    """A label, a button's or a tab's text not all shown."""
    if isinstance(w, QLabel) and w.text():
        if w.wordWrap():
            need = w.heightForWidth(w.width())
            if need > w.height():
                return f"text needs {need} px of height, has {w.height()}"
        elif w.sizeHint().width() > w.width() + 1 or w.sizeHint().height() > w.height() + 1:
            return f"text needs {w.sizeHint().width()}x{w.sizeHint().height()}, has {w.width()}x{w.height()}"
    if isinstance(w, QAbstractButton) and w.text():
        if w.sizeHint().width() > w.width() + 1 or w.minimumSizeHint().height() > w.height() + 1:
            return f"label needs {w.sizeHint().width()} px wide, has {w.width()}x{w.height()}"
    if isinstance(w, QTabBar):
        for i in range(w.count()):
            if not w.rect().contains(w.tabRect(i)) or w.tabRect(i).width() < w.tabSizeHint(i).width():
                return f"tab {w.tabText(i)!r} cut or off the bar"
    return None


def nested(w: QWidget) -> str | None:
    if not scrolls(w):
        return None
    parent = w.parentWidget()
    while parent is not None:
        if scrolls(parent):
            return f"a scroll area inside {name(parent)}"
        parent = parent.parentWidget()
    return None


def problems(window: QWidget) -> list[str]:
    """Every fault of the window as shown now, one line each."""
    out = []
    for w in shown_controls(window):
        for check in (outside, squeezed, cut, nested):
            why = check(w, window) if check is outside else check(w)
            if why:
                out.append(f"{name(w)}: {why}")
    return out
