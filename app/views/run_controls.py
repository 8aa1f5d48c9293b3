"""Run controls: language, task, cache on/off, max tokens, Transcribe and Stop."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from app.runs.options import CACHE_CEILING, LANGUAGES, TASKS, RunOptions


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
        self.suppress_eot.setToolTip("Diagnostics: the decoder may not stop at EOT, so the run shows the cache "
                                     "filling to 448 (set max tokens to 448)")
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, CACHE_CEILING)
        self.transcribe_button = QPushButton("Transcribe")
        self.transcribe_button.setStyleSheet("font-weight: bold;")
        self.stop_button = QPushButton("Stop")
        form = QFormLayout()
        form.addRow("Language", self.language)
        form.addRow("Task", self.task)
        form.addRow("Max tokens", self.max_tokens)
        form.addRow("", self.cache)
        form.addRow("", self.timestamps)
        form.addRow("", self.suppress_eot)
        buttons = QHBoxLayout()
        buttons.addWidget(self.transcribe_button, 2)
        buttons.addWidget(self.stop_button, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        self.transcribe_button.clicked.connect(self.transcribeRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        self.set_options(RunOptions())
        self.set_running(False, can_run=False)

    def options(self) -> RunOptions:
        return RunOptions(language=self.language.currentText().strip() or "auto", task=self.task.currentText(),
                          cache=self.cache.isChecked(), max_tokens=self.max_tokens.value(),
                          timestamps=self.timestamps.isChecked(), suppress_eot=self.suppress_eot.isChecked())

    def set_options(self, o: RunOptions) -> None:
        self.language.setCurrentText(o.language)
        self.task.setCurrentText(o.task)
        self.cache.setChecked(o.cache)
        self.max_tokens.setValue(o.max_tokens)
        self.timestamps.setChecked(o.timestamps)
        self.suppress_eot.setChecked(o.suppress_eot)

    def set_running(self, running: bool, can_run: bool = True) -> None:
        self.transcribe_button.setEnabled(not running and can_run)
        self.stop_button.setEnabled(running)
