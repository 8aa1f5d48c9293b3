"""The QA tab: run a suite TOML clip by clip through the main window's device, fill the table as each
clip finishes, and open any row's run in the main view (transcript, graphs, token table).

The tab only drives, through signals: it asks for each clip to be transcribed (`transcribeRequested`), and
the window answers with `run_started` (the run of the session, or None when it cannot start one) and later
`run_finished`. core.qa.run scores each run exactly as `whisperkv qa` does.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.background import TaskRunner
from app.errors import Failure, failure_of
from app.qa.report_box import ReportBox
from app.qa.window_box import WindowBox
from app.runs.clip import AudioClip, load_clip
from app.runs.focus import run_energy
from app.runs.record import RunRecord
from core.errors import WhisperKVError
from core.model.placement import RanOn
from core.qa.floor import device_floor, hold_to_floor
from core.qa.run import SUMMARY_COLUMNS, ClipResult, SuiteResult, failed, score
from core.qa.suite import Clip, Suite, load_suite

DEFAULT_SUITE = Path(__file__).resolve().parents[2] / "resources" / "audio" / "suite.toml"
COLUMNS = SUMMARY_COLUMNS
LIVE_MS = 250
PASS, FAIL = QColor("#c8e6c9"), QColor("#ffcdd2")


class QaTab(QWidget):
    clipScored = Signal(int, object)            # clip index, ClipResult
    suiteFinished = Signal(object)              # SuiteResult (also after Stop)
    transcribeRequested = Signal(object, object, object)  # AudioClip, DecodeOptions, WindowRule: run_started answers
    stopRequested = Signal()                    # cancel the clip decoding now
    openRunRequested = Signal(object)           # RunRecord to show in the main view
    failed = Signal(object)                     # Failure to show

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tasks = TaskRunner(self)
        self.suite: Suite | None = None
        self.results: list[ClipResult | None] = []
        self.runs: list[RunRecord | None] = []
        self.index = 0
        self.run: RunRecord | None = None
        self.stopping = False
        self.running = False

        self.path = QLineEdit(str(DEFAULT_SUITE))
        self.browse = QPushButton("Browse…")
        self.start_button = QPushButton("Run suite")
        self.stop_button = QPushButton("Stop")
        self.cache = QCheckBox("KV cache")
        self.cache.setChecked(True)
        self.timestamps = QCheckBox("Timestamps for every clip")
        self.window = WindowBox()
        self.progress = QProgressBar()
        self.progress.setFormat("%v/%m clips")
        self.status = QLabel("Pick a suite TOML and run it.")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeader().setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.setToolTip("Click a row to open its run in the main view")
        self.report = ReportBox(self.result)
        self.live = QTimer(self)
        self.live.setInterval(LIVE_MS)
        self._layout()
        self._wire()
        self._set_running(False)

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(QLabel("Suite:"))
        top.addWidget(self.path, 1)
        top.addWidget(self.browse)
        controls = QHBoxLayout()        # the progress beside the buttons: the table keeps the height
        for w in (self.cache, self.timestamps, self.window):
            controls.addWidget(w)
        controls.addWidget(self.progress, 1)
        for w in (self.start_button, self.stop_button):
            controls.addWidget(w)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(controls)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.report)

    def _wire(self) -> None:
        self.browse.clicked.connect(self._browse)
        self.start_button.clicked.connect(lambda: self.start())
        self.stop_button.clicked.connect(self.stop)
        self.report.failed.connect(self.failed)
        self.table.cellClicked.connect(lambda row, _col: self.open_row(row))
        self.live.timeout.connect(self._show_live)

    def _set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.path.setEnabled(not running)
        self.browse.setEnabled(not running)
        self.report.set_ready(not running and any(self.results))

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "QA suite", str(Path(self.path.text()).parent),
                                              "QA suites (*.toml)")
        if path:
            self.path.setText(path)

    # --- running the suite -------------------------------------------------------------------------

    def start(self, path: str | None = None) -> bool:
        """Load the suite and decode its first clip; False (with a dialog) when the suite is unusable."""
        if path is not None:
            self.path.setText(str(path))
        try:
            self.suite = load_suite(self.path.text())
        except WhisperKVError as exc:
            self.failed.emit(failure_of(exc))
            return False
        n = len(self.suite.clips)
        self.results, self.runs, self.index, self.stopping = [None] * n, [None] * n, 0, False
        self.table.setRowCount(n)
        for i, clip in enumerate(self.suite.clips):
            self._fill(i, (clip.name, "queued") + ("",) * (len(COLUMNS) - 2))
        self.progress.setRange(0, n)
        self.progress.setValue(0)
        self.running = True
        self._set_running(True)
        self._next()
        return True

    def stop(self) -> None:
        """Cancel the clip decoding now and run no more; a clip still loading ends the suite when loaded."""
        self.stopping = True
        if self.run is not None:
            self.stopRequested.emit()

    def _next(self) -> None:
        if self.stopping or self.index >= len(self.suite.clips):
            self._finish()
            return
        clip = self.suite.clips[self.index]
        self.status.setText(f"Clip {self.index + 1}/{len(self.suite.clips)}: loading {clip.name}…")
        self.tasks.start(load_clip, str(clip.audio), on_done=lambda audio: self._decode(clip, audio),
                         on_failed=self._abort)

    def _decode(self, clip: Clip, audio: AudioClip) -> None:
        if self.stopping:
            self._finish()
            return
        # Attention, so that a failing clip's report shows where the decoder looked.
        options = clip.options(cache=self.cache.isChecked(), timestamps=clip.timestamps or self.timestamps.isChecked())
        options = options.with_attention()
        self.transcribeRequested.emit(audio, options, self.window.rule())

    def run_started(self, run: RunRecord | None, busy: str = "") -> None:
        """The window's answer to transcribeRequested: the clip's run, or None when it could not start one (`busy`:
        what held the board, when it was not another run)."""
        if run is None:
            self._abort(Failure(busy or "another run is still decoding", "wait for it to finish or stop it, then "
                                "run the suite again"))
            return
        clip = self.suite.clips[self.index]
        self.run = self.runs[self.index] = run
        self.status.setText(f"Clip {self.index + 1}/{len(self.suite.clips)}: decoding {clip.name}…")
        self.live.start()

    def _show_live(self) -> None:
        if self.run is not None:
            self._set_cell(self.index, COLUMNS.index("tokens"), str(self.run.token_count()))
            self._set_cell(self.index, COLUMNS.index("why it stopped"), self.run.verdict())

    def run_finished(self, run: RunRecord) -> None:
        """Any run of the window ended; the tab scores the one it asked for."""
        if self.run is None or run is not self.run:
            return      # an ordinary run of the main window
        self.live.stop()
        self.run = None
        clip = self.suite.clips[self.index]
        if run.error is not None:
            result = failed(clip, WhisperKVError(run.error.get("problem", "the run failed"), run.error.get("fix", "")),
                            run.transcript)    # the text decoded before the failure stays in the row
        else:
            wall_ms = run.arrivals_ms[-1] if run.arrivals_ms else 0.0
            held = device_floor(clip, **run.qa_floor)      # the device profile's floor beside the suite's
            result = hold_to_floor(held, score(held, run.transcript, wall_ms, run.duration_s, run_energy(run)),
                                   RanOn.from_dict(run.device_info.get("ran_on")))
        result.npu_profile = run.npu_profile or None
        self.results[self.index] = result
        self._fill(self.index, result.summary_cells(), PASS if result.passed else FAIL)
        self.clipScored.emit(self.index, result)
        self.index += 1
        self.progress.setValue(self.index)
        self._next()

    def _abort(self, failure: Failure) -> None:
        self.stopping = True
        self.failed.emit(failure)
        self._finish()

    def _finish(self) -> None:
        if not self.running:
            return
        self.running = False
        self.live.stop()
        self.run = None
        result = self.result()
        self._set_running(False)
        total = len(self.suite.clips) if self.suite else 0
        verdict = "PASS" if result.passed and len(result.results) == total else "FAIL"
        self.status.setText(f"{verdict}: {result.n_passed}/{total} clips passed"
                            + ("" if len(result.results) == total else f" ({total - len(result.results)} not run)"))
        if result.results:
            self.report.write_default()
        self.suiteFinished.emit(result)

    # --- results ------------------------------------------------------------------------------------

    def result(self) -> SuiteResult:
        suite = self.suite
        devices = [run.device for run in self.runs if run is not None]
        meta = {"device": devices[-1]} if devices else {}
        meta |= {"cache": "on" if self.cache.isChecked() else "off", **self.window.rule().to_dict(),
                 "from": "WhisperKV Studio QA tab"}
        return SuiteResult(suite.name if suite else "", str(suite.path) if suite else "",
                           [r for r in self.results if r is not None], meta)

    def write_report(self, out: str | Path) -> Path:
        """The QA report, every format of core/qa/report.py::FORMATS, in `out`; returns the HTML path."""
        return self.report.write(out)

    def open_row(self, row: int) -> RunRecord | None:
        """Show the row's run in the main view (transcript, graphs, token table)."""
        run = self.runs[row] if 0 <= row < len(self.runs) else None
        if run is not None:
            self.openRunRequested.emit(run)
        return run

    def _fill(self, row: int, values: tuple, color: QColor | None = None) -> None:
        for col, value in enumerate(values):
            self._set_cell(row, col, str(value))
        if color is not None:
            self.table.item(row, 1).setBackground(color)
        self.table.resizeColumnsToContents()   # the verdict column keeps the rest (it stretches)

    def _set_cell(self, row: int, col: int, text: str) -> None:
        item = self.table.item(row, col)
        if item is None:
            item = QTableWidgetItem()
            if 1 < col < len(COLUMNS) - 1:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, col, item)
        item.setText(text)
