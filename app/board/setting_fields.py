"""The device panel's fields for a target's settings, generated from device/spec/settings.py: for each row the
studio shows (its `studio` kinds), a check box (a flag), a combo (a choice, or a text with a list to pick from) or a
line, with the studio's words for it (app/board/setting_words.py); read, written, shown and hidden by the setting's
name."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLineEdit, QWidget

from app.board.setting_words import WORDS
from device.spec.settings import SETTINGS, Setting

DEFAULT = "default"       # a choice's combo item for "the runner decides"


def make_field(s: Setting) -> QWidget:
    words = WORDS[s.name]
    if s.kind == "flag":      # the hint's words before any "(…)", the whole in the tooltip: the panel stays narrow
        widget = QCheckBox(words.hint.split(" (")[0])
    elif s.kind == "choice" or s.options is not None:
        widget = QComboBox()
        if s.options is not None:
            widget.addItems(s.options())
        else:
            widget.addItem(DEFAULT, None)
            for choice in s.choices:
                widget.addItem(choice, choice)
    else:
        widget = QLineEdit()
        widget.setPlaceholderText(words.hint)
    tip = words.tip() if words.tip else s.help_text()
    widget.setToolTip(f"{words.hint}: {tip}" if s.kind == "flag" and " (" in words.hint else tip)
    return widget


class SettingFields:
    """One field per shown setting, in the table's order."""

    def __init__(self):
        self.rows = [s for s in SETTINGS if s.studio]
        self.widgets: dict[str, QWidget] = {s.name: make_field(s) for s in self.rows}

    def __getitem__(self, name: str) -> QWidget:
        return self.widgets[name]

    def add_to(self, form: QFormLayout) -> None:
        for s in self.rows:
            form.addRow(WORDS[s.name].label, self.widgets[s.name])

    def names_for(self, kind: str) -> set[str]:
        """The settings whose fields a device of this kind takes."""
        return {s.name for s in self.rows if kind in s.studio}

    def show(self, target) -> None:
        """Fill the fields from a device target (device/link/target.py)."""
        for s in self.rows:
            widget, value = self.widgets[s.name], getattr(target, s.name)
            if isinstance(widget, QCheckBox):
                widget.setChecked(bool(value))
            elif isinstance(widget, QComboBox):
                if s.options is not None:
                    options = s.options()
                    widget.setCurrentText(value if value in options else options[0])
                else:
                    widget.setCurrentIndex(max(0, widget.findData(value)) if value else 0)
            else:
                widget.setText("" if value is None else str(value))

    def values(self) -> dict:
        """The settings the fields name (a field left empty or at its default names none)."""
        values = {}
        for s in self.rows:
            widget = self.widgets[s.name]
            if isinstance(widget, QCheckBox):
                value = widget.isChecked()
            elif isinstance(widget, QComboBox):
                value = widget.currentText() if s.options is not None else widget.currentData()
            else:
                value = widget.text().strip()
            if value not in (None, "", False, s.default):
                values[s.name] = value
        return values
