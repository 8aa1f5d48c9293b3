"""The Live tab's controls for the streaming policies' parameters: one spin box per row of the parameter table
(PARAMS in core/stream/policies.py), its range, unit and tooltip from the row; a parameter the chosen policy does
not read is disabled. A parameter whose row has no default shows "policy's own" at its least value."""
from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from core.stream.policies import DEFAULT_POLICY, PARAMS, PolicyParam

OWN = "policy's own"


def _box(param: PolicyParam) -> QSpinBox | QDoubleSpinBox:
    box = QSpinBox() if param.kind is int else QDoubleSpinBox()
    if param.kind is not int:
        box.setDecimals(2)
        box.setSingleStep(0.1)
    # A value at the low end that the row refuses stands for "the policy's own": no value is sent.
    box.setRange(param.low, 10_000 if param.kind is int else 60.0)
    if param.default is None:
        box.setSpecialValueText(OWN)
        box.setValue(param.low)
    else:
        box.setValue(param.default)
    box.setSuffix(f" {param.unit}")
    box.setToolTip(f"{param.help} ({param.flag} in `whisperkv stream`)")
    return box


class PolicyParams(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.boxes = {name: _box(param) for name, param in PARAMS.items()}
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        for name, box in self.boxes.items():
            form.addRow(name.replace("_", " "), box)
        self.show_policy(DEFAULT_POLICY)

    def show_policy(self, policy: str) -> None:
        for name, box in self.boxes.items():
            box.setEnabled(PARAMS[name].applies_to(policy))

    def values(self) -> dict:
        """The parameters set, for StreamConfig.params; one at its "policy's own" is left out."""
        return {name: PARAMS[name].kind(box.value()) for name, box in self.boxes.items()
                if not (PARAMS[name].default is None and box.value() == PARAMS[name].low)}
