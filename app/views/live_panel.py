"""The Live tab: stream the microphone or the loaded file in real time; committed text solid, tentative text
grey; the pass graphs, a compute-per-second gauge, and the stream's figures. Stopping keeps what was
committed; Export writes the stream's JSON document (text, commits, passes) or its text."""
from __future__ import annotations

import html
import json
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.plots.live_plots import LivePlots
from core.stream.events import Committed, PassRecord, Skipped, Tentative


class LivePanel(QWidget):
    startRequested = Signal(str)       # "mic" or "file"
    stopRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mic_button = QPushButton("Live: microphone")
        self.file_button = QPushButton("Live: loaded file at 1×")
        self.stop_button = QPushButton("Stop")
        self.export_button = QPushButton("Export…")
        self.gauge = QProgressBar()
        self.gauge.setRange(0, 200)
        self.gauge.setFormat("compute %v% of real time")
        self.figures = QLabel("")
        self.text = QTextEdit()
        self.text.setReadOnly(True)
        self.plots = LivePlots()
        row = QHBoxLayout()
        for w in (self.mic_button, self.file_button, self.stop_button, self.export_button):
            row.addWidget(w)
        row.addWidget(self.gauge, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.figures)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.plots, 2)
        self.mic_button.clicked.connect(lambda: self.startRequested.emit("mic"))
        self.file_button.clicked.connect(lambda: self.startRequested.emit("file"))
        self.stop_button.clicked.connect(self.stopRequested.emit)
        self.export_button.clicked.connect(self._export_dialog)
        self.summary: dict | None = None
        self.set_running(False)
        self.reset()

    def reset(self) -> None:
        self.committed, self.tentative, self.skips = "", "", 0
        self.summary = None
        self.plots.clear()
        self._show()

    def set_running(self, running: bool, have_file: bool = True) -> None:
        self.mic_button.setEnabled(not running)
        self.file_button.setEnabled(not running and have_file)
        self.stop_button.setEnabled(running)
        self.export_button.setEnabled(not running and self.summary is not None)

    def add_events(self, events: list) -> None:
        for ev in events:
            if isinstance(ev, Committed):
                self.committed += ev.text if self.committed else ev.text.lstrip()
            elif isinstance(ev, Tentative):
                self.tentative = ev.text
            elif isinstance(ev, Skipped):
                self.skips += 1
        self.plots.add(events)
        self._show()

    def finish(self, summary: dict) -> None:
        self.summary = summary
        self.tentative = ""
        self._show()
        self.set_running(False)

    def _show(self) -> None:
        self.text.setHtml(f"<span>{html.escape(self.committed)}</span>"
                          f"<span style='color:#999'>{html.escape(self.tentative)}</span>")
        passes: list[PassRecord] = self.plots.passes
        audio_s = max((p.at_s for p in passes), default=0.0)
        compute_s = sum(p.encoder_ms + p.decode_ms for p in passes) / 1e3
        self.gauge.setValue(min(200, round(100 * compute_s / audio_s)) if audio_s else 0)
        lags = sorted(c.lag_s for c in self.plots.commits)
        lag = f"lag median {lags[len(lags) // 2]:.2f} s" if lags else "nothing committed yet"
        self.figures.setText(f"{len(passes)} passes · {len(lags)} commits · {lag} · {self.skips} skipped ahead")

    def export(self, path: str | Path) -> None:
        path = Path(path)
        if path.suffix.lower() == ".txt":
            path.write_text((self.summary or {}).get("text", self.committed) + "\n", encoding="utf-8")
        else:
            path.write_text(json.dumps(self.summary, ensure_ascii=False, indent=1), encoding="utf-8")

    def _export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the live stream", "live.json",
                                              "Stream JSON (*.json);;Text (*.txt)")
        if path:
            self.export(path)
