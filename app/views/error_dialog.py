"""Errors as dialogs that name the problem and the fix — never a traceback. Non-blocking (open(), not
exec()), so decoding views keep updating and tests can find and close the dialog."""
from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

from app.errors import Failure

OBJECT_NAME = "errorDialog"


def show_failure(parent: QWidget, failure: Failure, title: str = "WhisperKV Studio",
                 on_action: Callable[[str], None] | None = None) -> QMessageBox:
    """on_action(failure.action) runs when its button (e.g. Restart runner) is pressed."""
    box = QMessageBox(parent)
    box.setObjectName(OBJECT_NAME)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(f"{title} — problem")
    box.setText(f"<b>Problem:</b> {_html(failure.problem)}")
    box.setInformativeText(f"<b>Fix:</b> {_html(failure.fix)}" if failure.fix else "")
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    if failure.action and on_action is not None:
        box.addButton(failure.action, QMessageBox.ButtonRole.AcceptRole).clicked.connect(
            lambda: on_action(failure.action))
        box.setEscapeButton(QMessageBox.StandardButton.Ok)   # with two buttons, Esc and close need telling
    box.setProperty("failure_code", failure.code)
    box.open()
    return box


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")
