"""The main window: panels on the left; transcript, live graphs, token table and compare on the right.
It wires the panels to the decode worker and keeps every run of the session."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import settings as app_settings
from app.audio.clip import AudioClip, clip_from_samples, load_clip
from app.audio.panel import AudioPanel
from app.audio.recorder import Recorder
from app.background import TaskRunner
from app.board.panel import DevicePanel
from app.board.profile import DeviceProfile
from app.board.tasks import deploy, test_connection
from app.board.worker import TranscribeWorker, WorkerThread
from app.errors import Failure
from app.plots.live_refresh import LiveRefresher
from app.plots.panel import PlotsPanel
from app.qa.tab import QaTab
from app.runs import token_names
from app.runs.options import RunOptions
from app.runs.record import RunRecord
from app.runs.session import Session
from app.theme import apply_theme
from app.views.compare_panel import ComparePanel
from app.views.error_dialog import show_failure
from app.views.export_menu import ExportMenu
from app.views.run_controls import RunControls
from app.views.segments import SegmentsView
from app.views.status_bar import StatusBar
from app.views.stop_banner import StopBanner
from app.views.token_table import TokenTable
from app.views.transcript import TranscriptView


class MainWindow(QMainWindow):
    clipLoaded = Signal(object)      # AudioClip
    runFinished = Signal(object)     # RunRecord (done, cancelled or failed)
    failureShown = Signal(object)    # Failure

    def __init__(self, store: QSettings | None = None, worker: TranscribeWorker | None = None,
                 recorder: Recorder | None = None):
        super().__init__()
        apply_theme(QApplication.instance())  # before any plot exists: pyqtgraph reads it at creation
        self.setWindowTitle("WhisperKV Studio")
        self.setAcceptDrops(True)
        self.store = store or app_settings.qsettings()
        self.settings = app_settings.load(self.store)
        self.session = Session()
        self.clip: AudioClip | None = None
        self.run: RunRecord | None = None          # the run on display
        self.active: RunRecord | None = None       # the run decoding now
        self.runner: dict = {}                     # the connected runner's hello summary
        self.device_info: dict = {}                # the last device-info of the connected profile
        self.tasks = TaskRunner(self)

        self.audio = AudioPanel(recorder)
        self.device = DevicePanel()
        self.controls = RunControls()
        self.banner = StopBanner()
        self.transcript = TranscriptView()
        self.plots = PlotsPanel()
        self.table = TokenTable()
        self.compare = ComparePanel(self.session)
        self.segments = SegmentsView()
        self.qa = QaTab(self)
        self.run_picker = QComboBox()
        self.run_picker.setMinimumWidth(300)
        self.status = StatusBar()
        self.setStatusBar(self.status)
        self._build_layout()
        self.exports = ExportMenu(self)
        self._build_menus()

        self.worker = worker or TranscribeWorker()
        self.worker_thread = WorkerThread(self.worker)
        self.live = LiveRefresher([self._sync_text, self.table.sync, *(p.refresh for p in self.plots.plots())],
                                  self)
        self._wire()
        self._apply_settings()
        self.tasks.start(token_names.preload)

    # --- layout ----------------------------------------------------------------------------------

    def _build_layout(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(self.audio, 3)
        left_layout.addWidget(self.controls)
        left_layout.addWidget(self.device)
        scroll = QScrollArea()
        scroll.setWidget(left)
        scroll.setWidgetResizable(True)
        scroll.setMinimumWidth(390)
        scroll.setMaximumWidth(470)

        header = QHBoxLayout()
        header.addWidget(QLabel("Run:"))
        header.addWidget(self.run_picker, 1)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(header)
        top_layout.addWidget(self.banner)
        top_layout.addWidget(self.transcript, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.table, "Tokens")
        self.tabs.addTab(self.segments, "Segments")
        self.tabs.addTab(self.compare, "Compare runs")
        self.tabs.addTab(self.qa, "QA suite")
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.plots)
        self.splitter.addWidget(self.tabs)
        self.splitter.setSizes([170, 380, 300])

        central = QSplitter(Qt.Orientation.Horizontal)
        central.addWidget(scroll)
        central.addWidget(self.splitter)
        central.setStretchFactor(1, 1)
        self.setCentralWidget(central)
        self.resize(1600, 1000)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open audio…", self, shortcut=QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self.audio.open_dialog)
        file_menu.addAction(open_action)
        file_menu.addSeparator()
        self.exports.add_to(file_menu)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        run_menu = self.menuBar().addMenu("&Run")
        for text, slot, key in (("&Transcribe", self.transcribe, "Ctrl+R"), ("&Stop", self.stop, "Esc")):
            action = QAction(text, self, shortcut=QKeySequence(key))
            action.triggered.connect(slot)
            run_menu.addAction(action)

    def _wire(self) -> None:
        self.audio.openRequested.connect(self.open_audio)
        self.audio.recorded.connect(self._use_recording)
        self.audio.failed.connect(self.show_failure)
        self.device.connectRequested.connect(self.connect_device)
        self.device.testRequested.connect(self.test_device)
        self.device.deployRequested.connect(self.deploy_device)
        self.device.profilesChanged.connect(self._save_profiles)
        self.controls.transcribeRequested.connect(self.transcribe)
        self.controls.stopRequested.connect(self.stop)
        self.worker.connected.connect(self._on_connected)
        self.worker.events.connect(self._on_events)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.plots.stepSelected.connect(self.table.select_step)
        self.table.stepSelected.connect(self.plots.select_step)
        self.run_picker.currentIndexChanged.connect(self._pick_run)

    def _apply_settings(self) -> None:
        s = self.settings
        self.controls.set_options(s.options)
        self.audio.set_recent(s.recent)
        self.device.set_profiles(s.profiles, s.profile)
        if s.geometry is not None:
            self.restoreGeometry(s.geometry)
        if s.splitter is not None:
            self.splitter.restoreState(s.splitter)

    def save_settings(self) -> None:
        s = self.settings
        s.options = self.controls.options()
        s.profiles = self.device.profiles
        s.profile = self.device.current_name()
        s.geometry = self.saveGeometry()
        s.splitter = self.splitter.saveState()
        app_settings.save(self.store, s)

    # --- audio -----------------------------------------------------------------------------------

    def open_audio(self, path: str) -> None:
        self.audio.show_loading(Path(path).name)
        self.tasks.start(load_clip, path, on_done=lambda clip: self._use_clip(clip, path),
                         on_failed=self._on_audio_failed)

    def _on_audio_failed(self, failure: Failure) -> None:
        self.audio.set_clip(self.clip)
        self.show_failure(failure)
        self.clipLoaded.emit(None)

    def _use_recording(self, samples) -> None:
        name = f"recording {len(self.session.runs) + 1}"
        self.tasks.start(clip_from_samples, name, samples, on_done=self._use_clip, on_failed=self.show_failure)

    def _use_clip(self, clip: AudioClip, path: str = "") -> None:
        self.clip = clip
        self.audio.set_clip(clip)
        if path:
            self.settings.add_recent(str(Path(path).resolve()))
            self.audio.set_recent(self.settings.recent)
        self.controls.set_running(self.active is not None, can_run=True)
        self.clipLoaded.emit(clip)

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.open_audio(paths[0])
            event.acceptProposedAction()

    # --- device ----------------------------------------------------------------------------------

    def connect_device(self, profile: DeviceProfile, password: str = "") -> None:
        self.status.show_device(profile.url(), "connecting…")
        self.worker.request_connect(profile, password)

    def _on_connected(self, summary: dict) -> None:
        self.runner = summary
        profile = self.worker.profile or DeviceProfile()
        self.status.show_device(profile.url(), "connected", summary)
        if self.active is not None and not self.active.device_info:
            self.active.device_info = self._device_info()

    def _device_info(self) -> dict:
        return {**self.device_info, **self.runner}

    def test_device(self, profile: DeviceProfile, password: str = "") -> None:
        self.device.set_busy(True)
        self.device.show_info({"testing": profile.url()})
        self.tasks.start(test_connection, profile, password, on_done=self._on_tested, on_failed=self._on_device_failed)

    def _on_tested(self, info: dict) -> None:
        self.device.set_busy(False)
        self.device_info = info
        self.device.show_info(info)

    def deploy_device(self, profile: DeviceProfile, password: str = "") -> None:
        self.device.set_busy(True)
        self.device.show_progress(0, 1)
        self.tasks.start(deploy, profile, password, on_done=self._on_deployed, on_failed=self._on_device_failed,
                         on_progress=self.device.show_progress)

    def _on_deployed(self, result: dict) -> None:
        self.device.set_busy(False)
        self.device.show_info(result)
        self.status.showMessage("Deploy finished", 5000)

    def _on_device_failed(self, failure: Failure) -> None:
        self.device.set_busy(False)
        self.device.show_info({"failed": failure.problem})
        self.show_failure(failure)

    def _save_profiles(self, profiles: list) -> None:
        self.settings.profiles = profiles
        self.save_settings()

    # --- runs ------------------------------------------------------------------------------------

    def transcribe(self) -> RunRecord | None:
        """Transcribe the loaded audio with the run controls' options."""
        if self.clip is None:
            return None
        return self.transcribe_clip(self.clip, self.controls.options())

    def transcribe_clip(self, clip: AudioClip, options: RunOptions) -> RunRecord | None:
        """Start a run of any clip (the QA tab sends its suite's clips here); None while another decodes."""
        if self.active is not None:
            return None
        profile = self.device.profile()
        run = self.session.new_run(clip.name, options, profile.url(), self._device_info(), clip.duration_s)
        self.active = run
        self._add_run_to_picker(run)
        self.controls.set_running(True)
        self.status.showMessage(f"Transcribing {clip.name} on {profile.url()}…")
        self.worker.request_transcribe(run.id, clip.mels, options, profile, self.device.password.text(),
                                       n_frames=clip.n_frames)
        return run

    def open_run(self, run: RunRecord) -> None:
        """Show a run of the session in the main view (transcript, graphs, table, segments)."""
        self.run_picker.setCurrentIndex(self.run_picker.findData(run.id))

    def stop(self) -> None:
        if self.active is not None:
            self.status.showMessage("Stopping…")
            self.worker.cancel()

    def _on_events(self, run_id: int, batch: list) -> None:
        run = self.session.by_id(run_id)
        if run is None:
            return
        for event, host_ms in batch:
            run.add(event, host_ms)
        if run is self.run:
            self.live.poke()

    def _on_finished(self, run_id: int) -> None:
        self._end_run(run_id)

    def _on_failed(self, run_id: int, failure: Failure) -> None:
        run = self.session.by_id(run_id)
        if run is not None:
            run.error = failure.to_dict()
        else:
            self.status.show_device((self.worker.profile or DeviceProfile()).url(), "not connected")
        self.show_failure(failure)
        if run is not None:
            self._end_run(run_id)

    def _end_run(self, run_id: int) -> None:
        run = self.session.by_id(run_id)
        if run is self.active:
            self.active = None
        self.controls.set_running(False, can_run=self.clip is not None)
        if run is self.run:
            self.live.settle(lambda: self._announce_end(run))
        else:
            self._announce_end(run)

    def _announce_end(self, run: RunRecord) -> None:
        """Once the views show the whole run: label it, offer it to compare, tell listeners."""
        self.run_picker.setItemText(self.run_picker.findData(run.id), run.label())
        self.compare.refresh_runs()
        self.status.showMessage(f"Run #{run.id}: {run.stop_reason}, {len(run.rows)} tokens", 10000)
        self.runFinished.emit(run)

    def _add_run_to_picker(self, run: RunRecord) -> None:
        self.run_picker.addItem(run.label(), run.id)
        self.run_picker.setCurrentIndex(self.run_picker.count() - 1)  # shows it via _pick_run

    def _pick_run(self, index: int) -> None:
        self.show_run(self.session.by_id(self.run_picker.itemData(index)))

    def show_run(self, run: RunRecord | None) -> None:
        self.run = run
        self.transcript.set_run(run)
        self.table.set_run(run)
        self.plots.set_run(run)
        self._refresh_views()

    def _refresh_views(self) -> None:
        self.live.flush()

    def _sync_text(self) -> None:
        if self.run is None:
            self.banner.show_reason(None)
            return
        self.transcript.sync()
        self.banner.show_run(self.run)
        self.segments.set_run(self.run)

    # --- errors and closing ----------------------------------------------------------------------

    def show_failure(self, failure: Failure) -> None:
        self.failureShown.emit(failure)
        show_failure(self, failure)

    def closeEvent(self, event) -> None:
        self.save_settings()
        self.worker_thread.stop()
        self.tasks.wait_all()
        super().closeEvent(event)
