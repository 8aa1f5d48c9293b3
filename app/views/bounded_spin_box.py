"""A spin box that refuses a typed number outside its range and says so, where QSpinBox silently keeps the
digits that fit (999 typed into 1–448 became 99)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox, QToolTip


class BoundedSpinBox(QSpinBox):
    refused = Signal(str)          # one line: what was typed, the range, and the value kept

    def __init__(self, name: str, parent=None):
        super().__init__(parent)
        self.name = name
        self.setKeyboardTracking(False)    # the value is what the user finished typing, not "99" on the way to 999
        self._said = ""                    # Qt calls fixup more than once per edit: say it once
        self.lineEdit().textEdited.connect(lambda _: setattr(self, "_said", ""))

    def validate(self, text: str, pos: int):
        state, text, pos = super().validate(text, pos)
        if state == QValidator.State.Invalid and text.strip().lstrip("-").isdigit():
            return QValidator.State.Intermediate, text, pos     # keep the digits; refused when editing ends
        return state, text, pos

    def fixup(self, text: str) -> str:
        """Called when editing ends on text that is not a value in range; the box then shows its last value."""
        typed = text.strip()
        if typed.lstrip("-").isdigit() and typed != self._said:
            self._said = typed
            message = (f"{self.name} must be {self.minimum()}–{self.maximum()}: {typed} refused, "
                       f"{self.value()} kept")
            QToolTip.showText(self.mapToGlobal(self.rect().bottomLeft()), message, self)
            self.refused.emit(message)
        return text
