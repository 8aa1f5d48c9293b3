"""The window's first size: what the views were laid out for, but never more than the screen's available
area (the desktop minus panels and docks), so the status bar and the plots' right ends are on screen; and the
geometry and splitter saved from the last session, restored."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter, QWidget

PREFERRED = QSize(1600, 1000)
FRAME_ALLOWANCE = QSize(16, 48)   # a window manager's borders and title bar, not yet known before the first show


def available_area(window: QWidget) -> QRect:
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def fit_to_screen(window: QWidget, preferred: QSize = PREFERRED) -> None:
    """Resize to `preferred` or the available area less the frame, whichever is smaller; centre it there."""
    area = available_area(window)
    room = area.size() - FRAME_ALLOWANCE
    size = preferred.boundedTo(room).expandedTo(window.minimumSizeHint().boundedTo(room))
    window.resize(size)
    window.move(area.center() - QRect(0, 0, size.width(), size.height()).center())


def keep_on_screen(window: QWidget) -> None:
    """A geometry restored from another, larger screen is fitted again rather than left hanging off it."""
    area = available_area(window)
    if not area.contains(window.geometry()):
        fit_to_screen(window)


def restore_window(window: QWidget, geometry, splitter: QSplitter, splitter_state) -> None:
    """The saved geometry (kept on this screen) and splitter state; None: the first size, as laid out."""
    if geometry is not None:
        window.restoreGeometry(geometry)
        keep_on_screen(window)
    if splitter_state is not None:
        splitter.restoreState(splitter_state)
