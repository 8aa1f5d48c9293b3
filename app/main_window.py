"""The main window: panels on the left; transcript, live graphs, token table and compare on the right.
It lays out the views and wires them to the run controller (runs on the decode worker) and the board
controller (connect, test, deploy), and shows whichever run of the session is picked."""
from __future__ import annotations

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import QApplication, QComboBox, QMainWindow

from app import settings as app_settings
from app.attention_links import link_attention
from app.audio.clip import AudioClip
from app.audio.loader import AudioLoader
from app.audio.panel import AudioPanel
from app.audio.recorder import Recorder
from app.audio.span_player import SpanPlayer
from app.background import TaskRunner
from app.board.controller import BoardController
from app.board.panel import DevicePanel
from app.board.worker import TranscribeWorker
from app.close_guard import may_close
from app.errors import Failure
from app.gui_thread_gc import collect_garbage_on_gui_thread
from app.live_controller import LiveRunController
from app.live_worker import LiveWorker
from app.plots.attention_heatmap import AttentionHeatmap
from app.plots.live_refresh import LiveRefresher
from app.plots.panel import PlotsPanel
from app.qa.tab import QaTab
from app.run_controller import RunController
from app.runs import compare as run_compare
from app.runs import token_names
from app.runs.record import RunRecord, cache_ceiling
from app.runs.session import Session
from app.theme import apply_theme
from app.views.compare_panel import ComparePanel
from app.views.error_dialog import show_failure
from app.views.export_menu import ExportMenu
from app.views.live_panel import LivePanel
from app.views.menus import build_menus
from app.views.npu_profile_view import NpuProfileView
from app.views.quality_strip import QualityStrip
from app.views.run_controls import RunControls
from app.views.segments import SegmentsView
from app.views.status_bar import StatusBar
from app.views.stop_banner import StopBanner
from app.views.token_table import TokenTable
from app.views.transcript import TranscriptView
from app.views.window_layout import lay_out
from app.window_settings import apply_settings, save_settings
from core.decode.options import DecodeOptions


class MainWindow(QMainWindow):
    clipLoaded = Signal(object)      # AudioClip
    runFinished = Signal(object)     # RunRecord (done, cancelled or failed)
    failureShown = Signal(object)    # Failure

    def __init__(self, store: QSettings | None = None, worker: TranscribeWorker | None = None,
                 recorder: Recorder | None = None, ask_on_close: bool = False):
        super().__init__()
        apply_theme(QApplication.instance())  # before any plot exists: pyqtgraph reads it at creation
        collect_garbage_on_gui_thread(QApplication.instance())
        self.setWindowTitle("WhisperKV Studio")
        self.store = store or app_settings.qsettings()
        self.settings = app_settings.load(self.store)
        self.session = Session()
        self.run: RunRecord | None = None          # the run on display
        self.tasks = TaskRunner(self)
        self.ask_on_close = ask_on_close           # unsaved runs: Save / Discard / Cancel (not when scripted)

        self.audio = AudioPanel(recorder)
        self.loader = AudioLoader(self.audio, self.settings, self.tasks, self)
        self.setAcceptDrops(True)
        self.device = DevicePanel()
        self.controls = RunControls()
        self.banner = StopBanner()
        self.quality = QualityStrip()
        self.transcript = TranscriptView()
        self.heatmap = AttentionHeatmap()
        self.plots = PlotsPanel()
        self.span_player = SpanPlayer(parent=self, output=self.audio.output)
        self.table = TokenTable()
        self.compare = ComparePanel(self.session)
        self.segments = SegmentsView()
        self.qa = QaTab()
        self.live_panel = LivePanel()
        self.npu_view = NpuProfileView()
        self.run_picker = QComboBox()
        self.run_picker.setMinimumWidth(300)
        self.status = StatusBar()
        self.setStatusBar(self.status)
        self.splitter, self.tabs = lay_out(
            self, [(self.audio, 3), (self.controls, 0), (self.device, 0)], self.run_picker,
            [self.banner, self.quality], self.transcript, [self.heatmap, self.plots],
            {"Tokens": self.table, "Segments": self.segments, "Compare runs": self.compare, "QA suite": self.qa,
             "Live": self.live_panel, "NPU profile": self.npu_view})
        self.exports = ExportMenu(self)
        build_menus(self, self.audio.open_dialog, self.exports, self.transcribe, self.stop)

        worker = worker or TranscribeWorker()
        self.runs = RunController(self.session, worker, self)
        self.live_worker = LiveWorker(worker)
        self.live_runs = LiveRunController(self.session, self.live_worker, self)
        self.board = BoardController(self.device, self.status, worker, self.tasks, self)
        self.live = LiveRefresher([self._sync_text, self.table.sync, *(p.refresh for p in self.plots.plots()),
                                   self.heatmap.refresh], self)
        self._wire()
        apply_settings(self)
        self.tasks.start(token_names.preload)
        self.tasks.start(run_compare.preload)

    def _wire(self) -> None:
        self.loader.loaded.connect(self._on_clip)
        self.loader.failed.connect(self.show_failure)
        self.loader.note.connect(lambda text: self.status.showMessage(text, 10000))
        self.controls.max_tokens.refused.connect(lambda text: self.status.showMessage(text, 10000))
        self.audio.failed.connect(self.show_failure)
        self.device.profilesChanged.connect(self._save_profiles)
        self.controls.transcribeRequested.connect(self.transcribe)
        self.controls.stopRequested.connect(self.stop)
        self.board.connected.connect(self._on_connected)
        self.board.failed.connect(self.show_failure)
        self.runs.updated.connect(self._on_run_updated)
        self.runs.ended.connect(self._on_run_ended)
        self.runs.failed.connect(self.show_failure)
        self.qa.transcribeRequested.connect(lambda clip, opts: self.qa.run_started(self.transcribe_clip(clip, opts)))
        self.qa.stopRequested.connect(self.stop)
        self.qa.openRunRequested.connect(self.open_run)
        self.qa.failed.connect(self.show_failure)
        self.runFinished.connect(self.qa.run_finished)
        self.plots.stepSelected.connect(self.table.select_step)
        self.table.stepSelected.connect(self.plots.select_step)
        self.run_picker.currentIndexChanged.connect(self._pick_run)
        self.run_picker.activated.connect(self._pick_run)      # the same run picked again: its audio again
        self.live_panel.startRequested.connect(self.start_live)
        self.live_panel.stopRequested.connect(self.live_runs.stop)   # a flag for the decode thread, set from here
        self.addAction(self.live_panel.present_action)                # F11 presents from anywhere in the window
        self.live_worker.events.connect(self.live_panel.add_events)
        self.live_worker.ended.connect(self.live_panel.finish)
        self.live_worker.failed.connect(self._on_live_failed)
        self.live_runs.updated.connect(self._on_run_updated)
        self.live_runs.ended.connect(self._on_run_ended)
        link_attention(self)

    def save_settings(self) -> None:
        save_settings(self)

    # --- audio -----------------------------------------------------------------------------------

    @property
    def clip(self) -> AudioClip | None:
        """The audio the next run sends: the one loaded, or that of the run on display."""
        return self.loader.clip

    def open_audio(self, path: str) -> None:
        self.loader.open(path)

    def _on_clip(self, clip: AudioClip | None) -> None:
        self.controls.set_running(self.runs.active is not None, can_run=self.clip is not None)
        self.clipLoaded.emit(clip)

    def dragEnterEvent(self, event) -> None:
        self.loader.drag_enter(event)

    def dropEvent(self, event) -> None:
        self.loader.drop(event)

    # --- device ----------------------------------------------------------------------------------

    def _on_connected(self, summary: dict) -> None:
        self.controls.set_cache_ceiling(cache_ceiling(summary))
        active = self.runs.active
        if active is not None and not active.device_info:
            active.device_info = self.board.run_info()

    def _save_profiles(self, profiles: list) -> None:
        self.settings.profiles = profiles
        self.save_settings()

    # --- runs ------------------------------------------------------------------------------------

    def transcribe(self) -> RunRecord | None:
        """Transcribe the loaded audio with the run controls' options."""
        if self.clip is None:
            return None
        return self.transcribe_clip(self.clip, self.controls.run_options())

    def transcribe_clip(self, clip: AudioClip, options: DecodeOptions) -> RunRecord | None:
        """Start a run of any clip (the QA tab asks for its suite's clips); None while another decodes."""
        profile = self.device.profile()
        run = self.runs.start(clip, options, profile, self.device.password.text(), self.board.run_info())
        if run is None:
            return None
        self._add_run_to_picker(run)
        self.controls.set_running(True)
        self.status.showMessage(f"Transcribing {clip.name} on {profile.url()}…")
        return run

    def open_run(self, run: RunRecord) -> None:
        """Show a run of the session in the main view (transcript, graphs, table, segments)."""
        index = self.run_picker.findData(run.id)
        if index == self.run_picker.currentIndex():
            self._pick_run(index)
        self.run_picker.setCurrentIndex(index)

    def stop(self) -> None:
        if self.runs.stop() or self.live_runs.stop():
            self.status.showMessage("Stopping…")

    def _on_run_updated(self, run: RunRecord) -> None:
        if run is self.run:
            self.live.poke()
        if run.live is not None:       # a stream's label counts its passes as they come
            self.run_picker.setItemText(self.run_picker.findData(run.id), run.label())

    def _on_run_ended(self, run: RunRecord) -> None:
        self.controls.set_running(False, can_run=self.clip is not None)
        self._settle_end(run)

    def _settle_end(self, run: RunRecord) -> None:
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
        self.heatmap.set_run(run)
        self.loader.follow(run)
        self.live.flush()

    def _sync_text(self) -> None:
        if self.run is None:
            self.banner.show_reason(None)
            self.quality.show_run(None)
            return
        self.transcript.sync()
        self.banner.show_run(self.run)
        self.quality.show_run(self.run)
        self.segments.set_run(self.run)
        self.npu_view.set_run(self.run)

    # --- live mode -------------------------------------------------------------------------------

    def start_live(self, source: str) -> None:
        """Stream the microphone ("mic") or the loaded clip at 1x ("file") through the runner, as a new run of
        the session shown at once."""
        if source == "file" and self.clip is None:
            return
        clip = self.clip if source == "file" else None
        run = self.live_runs.start(clip, self.audio.device_combo.currentData(), self.device.profile(),
                                   self.device.password.text(), self.board.run_info(), self.controls.options().language,
                                   self.live_panel.policy(), self.live_panel.params.values())
        if run is None:
            return
        self.live_panel.reset()
        self.live_panel.set_running(True)
        self.controls.set_running(True)
        self._add_run_to_picker(run)
        self.status.showMessage("Live: " + ("the microphone" if clip is None else clip.name))

    def _on_live_failed(self, failure: Failure) -> None:
        self.live_panel.set_running(False, self.clip is not None)
        self.show_failure(failure)

    # --- errors and closing ----------------------------------------------------------------------

    def show_failure(self, failure: Failure) -> None:
        self.failureShown.emit(failure)
        show_failure(self, failure, on_action=self.board.act)

    def closeEvent(self, event) -> None:
        if self.ask_on_close and not may_close(self, self.session, self.settings.export_dir, self.show_failure):
            event.ignore()
            return
        self.save_settings()
        self.live_worker.stop()
        self.runs.close()
        self.tasks.wait_all()
        self.qa.tasks.wait_all()
        self.transcript.tasks.wait_all()
        super().closeEvent(event)
