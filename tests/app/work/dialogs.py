"""Finding what the error dialog offers, for the studio's dead-runner tests."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from app.errors import RESTART_RUNNER
from app.views.error_dialog import OBJECT_NAME


def open_error_dialog(window) -> QMessageBox:
    """The error dialog on screen now (closed ones stay the window's children until it goes)."""
    shown = [d for d in window.findChildren(QMessageBox, OBJECT_NAME) if d.isVisible()]
    assert len(shown) == 1, [d.text() for d in shown]      # close() must have closed the last one
    return shown[0]


def restart_button(window):
    """The open dialog's Restart runner button, or None."""
    return next((b for b in open_error_dialog(window).buttons() if b.text() == RESTART_RUNNER), None)
