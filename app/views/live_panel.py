"""The Live tab: stream the microphone or the loaded file in real time, stop it, present its text full screen,
and export it; one status line and the stream's figures in plain words beside the pass graphs (the text itself
is in the main transcript and the presenter view). Stopping keeps what was committed; Export writes the stream's
JSON document (text, commits, passes) or its text."""
from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.audio.recorder import input_devices
from app.plots.live_plots import LivePlots
from app.runs.live_status import LiveTally
from app.views.policy_params import PolicyParams
from app.views.presenter import PresenterView
from core.stream.policies import POLICIES

# The Live tab's policy as it opens: the one with the lowest lag that keeps the words (docs/gui.md, "Policy and its
# parameters": AlignAtt commits ~0.5 s sooner than LocalAgreement-2 at a final WER within 0.02 of offline).
LIVE_POLICY = "alignatt"
SIDE_WIDTH = 250
LONGEST_STATUS = "catching up: passes skipped to keep up · 99.9 s behind the speaker"
LONGEST_FIGURES = ("999 passes over the audio · 999 pieces of text confirmed · text appears 99.9 s after the words "
                   "are spoken (median) · the runner works 9.99 s per second of audio · 999 passes skipped to keep up")


class LivePanel(QWidget):
    startRequested = Signal(str)       # "mic" or "file"
    stopRequested = Signal()
    exportRequested = Signal()         # Export… pressed: the window's exports ask where (app/views/export_menu.py)

    def __init__(self, parent=None, found_devices: tuple | None = None):
        super().__init__(parent)
        self.mic_button = QPushButton("Live: microphone")
        self.file_button = QPushButton("Live: loaded file at 1×")
        self.stop_button = QPushButton("Stop")
        self.export_button = QPushButton("Export…")
        self.policy_box = QComboBox()     # the streaming policies, from their one table
        for i, kind in enumerate(POLICIES.values()):
            self.policy_box.addItem(kind.name, kind.name)
            self.policy_box.setItemData(i, kind.summary, Qt.ItemDataRole.ToolTipRole)
        self.policy_box.setCurrentIndex(list(POLICIES).index(LIVE_POLICY))
        self.policy_box.setToolTip("How a pass's words are committed: hover a policy for what it does")
        self.params = PolicyParams()      # a control per policy parameter, from its table
        self.params.show_policy(self.policy())
        self.policy_box.currentIndexChanged.connect(lambda _: self.params.show_policy(self.policy()))
        self.present_action = QAction("Present", self, checkable=True, shortcut=QKeySequence("F11"))
        self.present_action.setToolTip("The live text large, in a window of its own, full screen (F11). "
                                       "Ctrl + / Ctrl − change its size; Esc stops the stream.")
        self.present_button = QToolButton()
        self.present_button.setDefaultAction(self.present_action)
        self.status_line = QLabel("")
        self.status_line.setStyleSheet("font-weight: bold;")
        self.status_line.setWordWrap(True)
        self.figures = QLabel("")
        self.figures.setWordWrap(True)
        self.plots = LivePlots()
        self.presenter = PresenterView(self)
        buttons = QHBoxLayout()         # one row over the graphs: every button at its full size
        for w in (self.mic_button, self.file_button, self.stop_button, self.present_button, self.export_button):
            buttons.addWidget(w)
        buttons.addStretch(1)
        side = QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        policy_row = QHBoxLayout()
        policy_row.addWidget(QLabel("Policy"))
        policy_row.addWidget(self.policy_box, 1)
        side.addLayout(policy_row)
        side.addWidget(self.params)
        side.addWidget(self.status_line)
        side.addWidget(self.figures)
        side.addStretch(1)
        side_widget = QWidget()
        side_widget.setLayout(side)
        side_widget.setFixedWidth(SIDE_WIDTH)
        for label, longest in ((self.status_line, LONGEST_STATUS), (self.figures, LONGEST_FIGURES)):
            label.setText(longest)           # room for the longest it says: the tab never grows mid-stream
            label.setMinimumHeight(label.heightForWidth(SIDE_WIDTH))
        right = QVBoxLayout()
        right.addLayout(buttons)
        right.addWidget(self.plots, 1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(side_widget)
        layout.addLayout(right, 1)
        self.mic_button.clicked.connect(lambda: self.startRequested.emit("mic"))
        self.file_button.clicked.connect(lambda: self.startRequested.emit("file"))
        self.stop_button.clicked.connect(self.stopRequested.emit)
        self.export_button.clicked.connect(self.exportRequested)
        self.present_action.toggled.connect(self._present)
        self.presenter.stopRequested.connect(self.stopRequested.emit)
        self.presenter.closed.connect(lambda: self.present_action.setChecked(False))
        self.summary: dict | None = None
        self.tally = LiveTally()
        self.running = False
        self.mic_reason = ""
        self.refresh_microphones(found_devices)
        self.set_running(False)
        self.reset()

    @property
    def committed(self) -> str:
        return self.tally.committed

    def refresh_microphones(self, found: tuple | None = None) -> None:
        """The microphone button is off, saying why, when there is no input device to stream from."""
        devices, why = found if found is not None else input_devices()
        # input_devices says "Recording is off: <why> — <fix>"; the same why and fix, for this button
        self.mic_reason = "" if devices else "Live from a microphone is off: " + (why.partition(": ")[2] or why)
        self.mic_button.setToolTip(self.mic_reason or "Transcribe the chosen microphone live")
        self.mic_button.setEnabled(not self.running and not self.mic_reason)

    def policy(self) -> str:
        return self.policy_box.currentData()

    def reset(self) -> None:
        self.tally = LiveTally()
        self.summary = None
        self.plots.clear()
        self._show()

    def set_running(self, running: bool, have_file: bool = True) -> None:
        self.running = running
        self.mic_button.setEnabled(not running and not self.mic_reason)
        self.file_button.setEnabled(not running and have_file)
        self.stop_button.setEnabled(running)
        self.policy_box.setEnabled(not running)
        self.params.setEnabled(not running)
        self.export_button.setEnabled(not running and self.summary is not None)
        self._show_status()

    def add_events(self, events: list) -> None:
        self.tally.add(events)
        self.plots.add(events)
        self._show()

    def finish(self, summary: dict) -> None:
        self.summary = summary
        self.tally.tentative = ""
        self.set_running(False)
        self._show()

    def _show(self) -> None:
        self.figures.setText(self.tally.figures() if self.tally.passes else "")
        self.presenter.show_text(self.tally.committed, self.tally.tentative)
        self._show_status()

    def _show_status(self) -> None:
        end = (self.summary or {}).get("end")
        line = self.tally.status(self.running, end)
        if line != self.status_line.text():
            self.status_line.setText(line)
        self.presenter.show_status(line, self.running)

    def _present(self, on: bool) -> None:
        if on:
            self.presenter.present()
        else:
            self.presenter.hide()

    def export(self, path: str | Path) -> None:
        path = Path(path)
        if path.suffix.lower() == ".txt":
            path.write_text((self.summary or {}).get("text", self.committed) + "\n", encoding="utf-8")
        else:
            path.write_text(json.dumps(self.summary, ensure_ascii=False, indent=1), encoding="utf-8")
