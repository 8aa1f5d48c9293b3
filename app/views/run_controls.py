"""Run controls: language, task, cache on/off, max tokens, timestamps, attention, Transcribe and Stop."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
)

from app.views.bounded_spin_box import BoundedSpinBox
from core.decode.options import TASKS, DecodeOptions
from core.model.dims import ModelDims

# A shortlist for the menu; the field is editable and takes any code the runner's tokenizer knows.
LANGUAGES = ("auto", "en", "zh", "ja", "ko", "de", "fr", "es", "ru", "it", "pt", "nl", "ar", "hi")


class RunControls(QGroupBox):
    transcribeRequested = Signal()
    stopRequested = Signal()

    def __init__(self, parent=None):
        super().__init__("Run", parent)
        self.language = QComboBox()
        self.language.addItems(LANGUAGES)
        self.language.setEditable(True)  # any Whisper language code; the runner checks it
        self.task = QComboBox()
        self.task.addItems(TASKS)
        self.cache = QCheckBox("KV cache on")
        self.cache.setToolTip("Off reruns the whole decoder every step: same tokens, slower — compare the two")
        self.timestamps = QCheckBox("Timestamps (segments for SRT/VTT)")
        self.suppress_eot = QCheckBox("Suppress EOT (run into the cache ceiling)")
        self.attention = QCheckBox("Attention (heatmap, word times, click-to-play)")
        self.attention.setToolTip("The heatmap, word timings and tint, click-to-play: each step also returns the "
                                  "alignment heads' cross-attention (8×1500 fp16, 12 kB): where the decoder looks, "
                                  "and the words' times")
        self.max_tokens = BoundedSpinBox("Max tokens")
        self.set_cache_ceiling(ModelDims().n_text_ctx)
        self.transcribe_button = QPushButton("Transcribe")
        self.transcribe_button.setStyleSheet("font-weight: bold;")
        self.stop_button = QPushButton("Stop")
        form = QFormLayout()
        form.addRow("Language", self.language)
        form.addRow("Task", self.task)
        form.addRow("Max tokens", self.max_tokens)
        for box in (self.cache, self.timestamps, self.suppress_eot, self.attention):
            form.addRow(box)          # the whole width: the side panel stays narrow
        buttons = QHBoxLayout()
        buttons.addWidget(self.transcribe_button, 2)
        buttons.addWidget(self.stop_button, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        self.cache.toggled.connect(self.attention.setEnabled)
        self.transcribe_button.clicked.connect(self.transcribeRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        self.set_options(DecodeOptions())
        self.set_running(False, can_run=False)

    def options(self) -> DecodeOptions:
        """What a run asks for: attention when its box is ticked, as far as DecodeOptions' rule allows (not with
        the cache off). The box keeps its state, so attention comes back with the cache."""
        return DecodeOptions(language=self.language.currentText().strip() or None, task=self.task.currentText(),
                             cache=self.cache.isChecked(), max_tokens=self.max_tokens.value(),
                             timestamps=self.timestamps.isChecked(), suppress_eot=self.suppress_eot.isChecked()
                             ).with_attention(self.attention.isChecked())

    def set_options(self, o: DecodeOptions, attention: bool | None = None) -> None:
        """`attention`: the box's state when it is not `o`'s (ticked while the cache is off)."""
        self.language.setCurrentText(o.language_label)
        self.task.setCurrentText(o.task)
        self.cache.setChecked(o.cache)
        self.max_tokens.setValue(o.max_tokens)
        self.timestamps.setChecked(o.timestamps)
        self.suppress_eot.setChecked(o.suppress_eot)
        self.attention.setChecked(o.attention if attention is None else attention)

    def set_cache_ceiling(self, ceiling: int) -> None:
        """Decoder positions of the runner's cache (its hello's cache.max_len): no run can sample more tokens."""
        self.max_tokens.setRange(1, ceiling)
        self.suppress_eot.setToolTip("Diagnostics: the decoder may not stop at EOT, so the run shows the cache "
                                     f"filling to {ceiling} (set max tokens to {ceiling})")

    def set_running(self, running: bool, can_run: bool = True) -> None:
        self.transcribe_button.setEnabled(not running and can_run)
        self.stop_button.setEnabled(running)
