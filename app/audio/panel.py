"""Audio panel: open (dialog or recent files), record with a device picker and level meter, play back,
and the waveform/mel view of what will be sent."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
)

from app.audio import player
from app.audio.output import Output
from app.audio.recorder import Recorder, input_devices
from app.audio.view import AudioView
from app.errors import failure_of
from app.runs.clip import AudioClip
from app.settings import dialog_dir
from core.model.audio import SUPPORTED

AUDIO_FILTER = f"Audio and video ({' '.join('*' + s for s in SUPPORTED)});;All files (*)"


class AudioPanel(QGroupBox):
    openRequested = Signal(str)          # a path to load
    recorded = Signal(object)            # float32 samples, 16 kHz mono
    failed = Signal(object)              # Failure for the error dialog

    def __init__(self, recorder: Recorder | None = None, parent=None):
        super().__init__("Audio", parent)
        self.recorder = recorder or Recorder()
        self.output = Output()
        self.clip: AudioClip | None = None
        self.start_dir = ""              # where the open dialog starts (the loader keeps it): home the first time
        self.open_button = QPushButton("Open…")
        self.recent_button = QToolButton()
        self.recent_button.setText("Recent")
        self.recent_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.recent_menu = QMenu(self)
        self.recent_button.setMenu(self.recent_menu)
        self.clip_label = QLabel("No audio — open a file, drop one here, or record.")
        self.clip_label.setWordWrap(True)
        self.device_combo = QComboBox()
        self.device_combo.setMinimumWidth(140)
        self.record_button = QPushButton("● Record")
        self.record_button.setCheckable(True)
        self.level = QProgressBar()
        self.level.setRange(0, 100)
        self.level.setTextVisible(False)
        self.level.setFixedHeight(10)        # a thin meter: it shows no text
        self.record_note = QLabel("")
        self.record_note.setWordWrap(True)
        self.record_note.setStyleSheet("color: #8a4b00;")
        self.play_button = QPushButton("▶ Play")
        self.stop_play_button = QPushButton("■")
        self.stop_play_button.setToolTip("Stop playback")
        self.view = AudioView()
        self.view.setMinimumHeight(150)

        row1 = QHBoxLayout()
        row1.addWidget(self.open_button)
        row1.addWidget(self.recent_button)
        row1.addWidget(self.play_button)
        row1.addWidget(self.stop_play_button)
        row1.addStretch(1)
        row2 = QHBoxLayout()
        row2.addWidget(QLabel("Mic:"))
        row2.addWidget(self.device_combo, 1)
        row2.addWidget(self.record_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row1)
        layout.addWidget(self.clip_label)
        layout.addLayout(row2)
        layout.addWidget(self.level)
        layout.addWidget(self.record_note)
        layout.addWidget(self.view, 1)

        self.open_button.clicked.connect(self.open_dialog)
        self.record_button.toggled.connect(self._toggle_record)
        self.play_button.clicked.connect(self._play)
        self.stop_play_button.clicked.connect(player.stop)
        self.level_timer = QTimer(self)
        self.level_timer.setInterval(50)
        self.level_timer.timeout.connect(self._show_level)
        self.refresh_devices()
        self.set_clip(None)

    # --- devices and recording ------------------------------------------------------------------

    def refresh_devices(self, found=None) -> None:
        devices, why = found if found is not None else input_devices()
        self.device_combo.clear()
        for d in devices:
            self.device_combo.addItem(d.name, d.index)
        usable = bool(devices)
        self.device_combo.setEnabled(usable)
        self.record_button.setEnabled(usable)
        self.record_note.setText(why)
        self.record_note.setVisible(bool(why))

    def _toggle_record(self, on: bool) -> None:
        if on:
            try:
                self.recorder.start(self.device_combo.currentData())
            except Exception as exc:
                self.record_button.setChecked(False)
                self.failed.emit(failure_of(exc))
                return
            self.record_button.setText("■ Stop")
            self.level_timer.start()
            return
        if not self.recorder.recording:
            return
        self.level_timer.stop()
        samples = self.recorder.stop()
        self.record_button.setText("● Record")
        self.level.setValue(0)
        if samples.size:
            self.recorded.emit(samples)

    def _show_level(self) -> None:
        # RMS of speech sits around 0.01-0.3: a square-root scale keeps quiet input visible.
        self.level.setValue(int(min(1.0, np.sqrt(self.recorder.level * 4)) * 100))
        self.clip_label.setText(f"Recording… {self.recorder.seconds():.1f} s")

    # --- files and playback ---------------------------------------------------------------------

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open audio", dialog_dir(self.start_dir), AUDIO_FILTER)
        if path:
            self.openRequested.emit(path)

    def set_recent(self, paths: list[str]) -> None:
        self.recent_menu.clear()
        for p in paths:
            self.recent_menu.addAction(p, lambda p=p: self.openRequested.emit(p))
        self.recent_button.setEnabled(bool(paths))

    def set_clip(self, clip: AudioClip | None) -> None:
        self.clip = clip
        self.play_button.setEnabled(clip is not None)
        self.view.set_clip(clip)
        if clip is None:
            self.clip_label.setText("No audio — open a file, drop one here, or record.")
            return
        w = clip.mels.shape[0]
        self.clip_label.setText(f"<b>{clip.name}</b> — {clip.duration_s:.1f} s, "
                                f"{w} window{'s' if w > 1 else ''} of mel [80×3000] to send")

    def set_missing(self, reason: str) -> None:
        """The shown run's audio cannot be shown: say why, and show no other file's waveform."""
        self.set_clip(None)
        self.clip_label.setText(reason[0].upper() + reason[1:])

    def show_loading(self, name: str) -> None:
        self.clip_label.setText(f"Loading {name}…")

    def _play(self) -> None:
        if self.clip is None:
            return
        self.output.play(self.clip.samples, self.failed.emit, self.record_note.setText)
