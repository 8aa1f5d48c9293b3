"""The main window: panels on the left; transcript, live graphs, token table and compare on the right.
It lays out the views and wires them to the run controller (runs on the decode worker) and the board
controller (connect, test, deploy), and shows whichever run of the session is picked."""
from __future__ import annotations

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import QApplication, QMainWindow

from app import settings as app_settings
from app.audio.loader import AudioLoader
from app.audio.panel import AudioPanel
from app.audio.recorder import Recorder
from app.audio.span_player import SpanPlayer
from app.background import TaskRunner, collect_garbage_on_gui_thread
from app.board.panel import DevicePanel
from app.close_guard import may_close
from app.errors import Failure
from app.plots.live_refresh import LiveRefresher
from app.runs import compare as run_compare
from app.runs import token_names
from app.runs.clip import AudioClip
from app.runs.record import RunRecord, cache_ceiling
from app.runs.session import Session
from app.theme import apply_theme
from app.views import view_table
from app.views.error_dialog import show_failure
from app.views.export_menu import ExportMenu
from app.views.menus import build_menus
from app.views.run_controls import RunControls
from app.views.run_picker import RunPicker
from app.views.status_bar import StatusBar
from app.views.window_layout import lay_out
from app.views.window_size import restore_window
from app.work.board_controller import BoardController, decoding_now
from app.work.decode_worker import TranscribeWorker
from app.work.live_controller import LiveRunController
from app.work.live_worker import LiveWorker
from app.work.run_controller import RunController
from core.decode.options import DecodeOptions
from core.decode.window_choice import WindowRule


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
        self.span_player = SpanPlayer(parent=self, output=self.audio.output)
        self.run_picker = RunPicker(self.session)
        self.status = StatusBar()
        self.setStatusBar(self.status)
        left = [(self.audio, 3), (self.controls, 0), (self.device, 0)]
        self.splitter, self.tabs = lay_out(self, left, self.run_picker, **view_table.build_views(self),
                                           under_left=self.device.info)
        self.exports = ExportMenu(self)
        build_menus(self, self.exports)

        worker = worker or TranscribeWorker()
        self.runs = RunController(self.session, worker, self)
        self.live_worker = LiveWorker(worker)
        self.live_runs = LiveRunController(self.session, self.live_worker, self.live_panel,
                                           lambda: self.clip is not None, self)
        self.board = BoardController(self.device, self.status, worker, self.tasks, self,
                                     decoding=lambda: decoding_now(self.runs, self.live_worker))
        self.live = LiveRefresher(view_table.live_turns(self), self)
        self._wire()
        self._apply_settings()
        for preload in (token_names.preload, run_compare.preload):
            self.tasks.start(preload)

    def _wire(self) -> None:
        for source in (self.loader, self.audio, self.board, self.runs, self.qa, self.span_player, self.live_worker):
            source.failed.connect(self.show_failure)
        for note, ms in ((self.loader.note, 10000), (self.controls.max_tokens.refused, 10000),
                         (self.span_player.note, 8000)):
            note.connect(lambda text, ms=ms: self.status.showMessage(text, ms))
        self.device.profilesChanged.connect(lambda profiles: self.save_settings())
        self.qa.transcribeRequested.connect(
            lambda clip, opts, window: self.qa.run_started(self.transcribe_clip(clip, opts, window), self.board.busy()))
        view_table.link_views(self)
        self.heatmap.setXLink(self.audio.view.wave_plot)   # seconds, aligned with the waveform and the mel
        for source in (self.transcript, self.table):       # a clicked word or token plays its span
            source.stepClicked.connect(lambda x: self.span_player.play_step(self.run, x))

    def _apply_settings(self) -> None:
        """Run options, recent files, device profiles, the window's geometry and splitter, as saved on close."""
        s = self.settings
        self.controls.set_options(s.options, s.attention)
        self.audio.set_recent(s.recent)
        self.device.set_profiles(s.profiles, s.profile)
        restore_window(self, s.geometry, self.splitter, s.splitter)

    def save_settings(self) -> None:
        s = self.settings
        s.options, s.profiles, s.profile = self.controls.options(), self.device.profiles, self.device.current_name()
        s.attention = self.controls.attention.isChecked()
        s.geometry, s.splitter = self.saveGeometry(), self.splitter.saveState()
        app_settings.save(self.store, s)

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

    def _on_connected(self, summary: dict) -> None:
        self.controls.set_cache_ceiling(cache_ceiling(summary))
        active = self.runs.active
        if active is not None and not active.device_info:
            active.device_info = self.board.run_info()

    def transcribe(self) -> RunRecord | None:
        """Transcribe the loaded audio with the run controls' options."""
        if self.clip is None:
            return None
        return self.transcribe_clip(self.clip, self.controls.options())

    def transcribe_clip(self, clip: AudioClip, options: DecodeOptions, window: WindowRule | None = None
                        ) -> RunRecord | None:
        """Start a run of any clip (the QA tab's suites too, with their encoder window's rule); None while another
        decodes or Check board climbs."""
        if self.board.refuses("Transcribe"):
            return None
        profile = self.device.profile()
        run = self.runs.start(clip, options, profile, self.device.password.text(), self.board.run_info(), window)
        return self._started(run, f"Transcribing {clip.name} on {profile.url()}…")

    def _started(self, run: RunRecord | None, message: str) -> RunRecord | None:
        if run is not None:
            self.run_picker.add(run)
            self.controls.set_running(True)
            self.status.showMessage(message)
        return run

    def open_run(self, run: RunRecord) -> None:
        """Show a run of the session in the main view (transcript, graphs, table, segments)."""
        self.run_picker.select(run)

    def stop(self) -> None:
        if self.runs.stop() or self.live_runs.stop():
            self.status.showMessage("Stopping…")

    def _on_run_updated(self, run: RunRecord) -> None:
        if run is self.run:
            self.live.poke()
            self.status.show_progress(run)
        self.run_picker.relabel(run)   # its count as it comes (a stream's: its passes), as the banner's at the end

    def _on_run_ended(self, run: RunRecord) -> None:
        self.controls.set_running(False, can_run=self.clip is not None)
        if run is self.run:
            self.live.settle(lambda: self._announce_end(run))
        else:
            self._announce_end(run)

    def _announce_end(self, run: RunRecord) -> None:
        """Once the views show the whole run: label it, offer it to compare, tell listeners."""
        self.run_picker.relabel(run)
        self.compare.refresh_runs()
        self.status.showMessage(f"Run #{run.id}: {run.stop_reason}, {run.token_count()} tokens", 10000)
        self.runFinished.emit(run)

    def show_run(self, run: RunRecord | None) -> None:
        self.run = run
        view_table.show_run(self, run)
        self.loader.follow(run)
        self.live.flush()

    def start_live(self, source: str) -> None:
        """Stream the microphone ("mic") or the loaded clip at 1x ("file") through the runner, as a new run of
        the session shown at once."""
        if (source == "file" and self.clip is None) or self.board.refuses("Live"):
            return
        clip = self.clip if source == "file" else None
        run = self.live_runs.start(clip, self.audio.device_combo.currentData(), self.device.profile(),
                                   self.device.password.text(), self.board.run_info(), self.controls.options().language)
        self._started(run, "Live: " + ("the microphone" if clip is None else clip.name))

    def show_failure(self, failure: Failure) -> None:
        self.failureShown.emit(failure)
        show_failure(self, failure, on_action=self.board.act)

    def closeEvent(self, event) -> None:
        if self.ask_on_close and not may_close(self, self.session, self.settings.export_dir, self.show_failure):
            event.ignore()
            return
        self.save_settings()
        self.live_worker.stop()
        self.board.close()
        self.runs.close()
        for tasks in (self.tasks, self.qa.tasks, self.transcript.tasks):
            tasks.wait_all()
        super().closeEvent(event)
