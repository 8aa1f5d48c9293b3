"""The QA tab's encoder window: Whisper's 30 s, a shorter length, or auto, the smallest that holds each clip plus
the margin, never under the floor (core/decode/window_choice.py, what `whisperkv qa --window` takes). The lengths
come from core/model/dims.py's WINDOWS_S, and auto's floor and margin are one spin box per row of WINDOW_PARAMS,
enabled under auto only."""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QWidget

from core.decode.window_choice import AUTO, WINDOW_PARAMS, WindowParam, WindowRule
from core.model.dims import FULL_WINDOW_S, WINDOWS_S


def _box(param: WindowParam) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, float(FULL_WINDOW_S))
    box.setDecimals(1)
    box.setSingleStep(1.0)
    box.setValue(param.default)
    box.setSuffix(" s")
    box.setToolTip(f"{param.help} ({param.flag} in `whisperkv qa`)")
    return box


class WindowBox(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.choice = QComboBox()
        for window_s in sorted(WINDOWS_S, reverse=True):
            self.choice.addItem(f"{window_s} s", str(window_s))
        self.choice.addItem(AUTO, AUTO)
        self.choice.setToolTip("The encoder window each clip is decoded in (--window in `whisperkv qa`): a runner "
                               "without shorter windows encodes 30 s; a clip longer than the length fails")
        self.boxes = {param.name: _box(param) for param in WINDOW_PARAMS}
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Window:"))
        row.addWidget(self.choice)
        for param in WINDOW_PARAMS:
            row.addWidget(QLabel(param.flag.removeprefix("--window-") + ":"))
            row.addWidget(self.boxes[param.name])
        self.choice.currentIndexChanged.connect(self._show)
        self._show()

    def _show(self) -> None:
        for box in self.boxes.values():
            box.setEnabled(self.choice.currentData() == AUTO)

    def rule(self) -> WindowRule:
        return WindowRule(self.choice.currentData(), **{name: box.value() for name, box in self.boxes.items()})
