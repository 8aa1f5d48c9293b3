"""The device panel's fields for a target's settings, generated from device/spec/settings.py: for each row the
studio shows, a check box (a flag), a combo (a choice, or a text with a list to pick from) or a line, with its
label, placeholder and tooltip; read and written by the setting's name."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLineEdit, QWidget

from device.spec.settings import SETTINGS, Setting

DEFAULT = "default"       # a choice's combo item for "the runner decides"


def make_field(s: Setting) -> QWidget:
    if s.kind == "flag":      # the hint's words before any "(…)", the whole in the tooltip: the panel stays narrow
        widget = QCheckBox(s.studio.hint.split(" (")[0])
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
        widget.setPlaceholderText(s.studio.hint)
    tip = s.studio.tip() if s.studio.tip else s.help_text()
    widget.setToolTip(f"{s.studio.hint}: {tip}" if s.kind == "flag" and " (" in s.studio.hint else tip)
    return widget


class SettingFields:
    """One field per shown setting, in the table's order."""

    def __init__(self):
        self.rows = [s for s in SETTINGS if s.studio is not None]
        self.widgets: dict[str, QWidget] = {s.name: make_field(s) for s in self.rows}

    def __getitem__(self, name: str) -> QWidget:
        return self.widgets[name]

    def add_to(self, form: QFormLayout) -> None:
        for s in self.rows:
            form.addRow(s.studio.label, self.widgets[s.name])

    def labels_for(self, kind: str) -> set[str]:
        """The labels of the fields a device of this kind takes."""
        return {s.studio.label for s in self.rows if kind in s.studio.kinds}

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
