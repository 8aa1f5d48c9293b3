"""A live stream's life as a run of the session: the run is created when the stream starts, the live worker's
runner-event batches and commits are folded into it, and it ends with the stream's summary (or its error). The
Live tab follows it: reset and running at the start, the stream's events as they come, its summary at the end."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.errors import Failure
from app.runs import live as live_runs
from app.runs.record import RunRecord
from app.runs.session import Session
from app.views.live_panel import LivePanel
from app.work.live_worker import LiveWorker
from core.decode.options import DecodeOptions
from device.link.profile import DeviceProfile


class LiveRunController(QObject):
    updated = Signal(object)       # RunRecord that received runner events
    ended = Signal(object)         # RunRecord: its stream ended (stopped, end of stream, or error)

    def __init__(self, session: Session, worker: LiveWorker, panel: LivePanel, have_file: Callable[[], bool],
                 parent=None):
        """`have_file()`: whether a clip is loaded to stream (the Live tab's file button after a failure)."""
        super().__init__(parent)
        self.session, self.worker, self.panel, self.have_file = session, worker, panel, have_file
        self.run: RunRecord | None = None           # the run streaming now
        worker.events.connect(self._on_events)
        worker.runner_events.connect(self._on_runner_events)
        worker.failed.connect(self._on_failed)
        worker.ended.connect(self._on_ended)
        panel.stopRequested.connect(self.stop)       # a flag for the decode thread, set from the UI thread
        worker.events.connect(panel.add_events)
        worker.ended.connect(panel.finish)

    def start(self, clip, mic_device, profile: DeviceProfile, password: str, device_info: dict,
              language: str | None) -> RunRecord | None:
        """A new live run of `clip` at 1x, or of the microphone when clip is None, with the Live tab's policy and
        parameters; None while one streams."""
        if self.worker.running:
            return None
        name = "mic" if clip is None else clip.name
        options = DecodeOptions(language=language, word_timestamps=True)   # what every pass asks for
        run = self.session.new_run(name, options, profile.url(), device_info, clip.duration_s if clip else 0.0)
        self.run = live_runs.start_live(run, name)
        self.worker.start(None if clip is None else clip.samples, mic_device, profile, password, language,
                          self.panel.policy(), self.panel.params.values())
        self.panel.reset()
        self.panel.set_running(True)
        return run

    def stop(self) -> bool:
        """End the stream within one pass, whatever the decode thread is doing: a flag it checks between passes,
        set from here, not a call queued behind the stream on its thread. False when none streams."""
        if not self.worker.running:
            return False
        self.worker.stop()
        return True

    def _on_events(self, events: list) -> None:
        if self.run is not None and live_runs.add_stream_events(self.run, events):
            self.updated.emit(self.run)

    def _on_runner_events(self, batch: list) -> None:
        run = self.run
        if run is None:
            return
        run.add_batch(batch)
        self.updated.emit(run)

    def _on_failed(self, failure: Failure) -> None:
        if self.run is not None:
            self.run.error = failure.to_dict()
        self.panel.set_running(False, self.have_file())

    def _on_ended(self, summary: dict) -> None:
        run, self.run = self.run, None
        if run is not None:
            live_runs.end_live(run, summary)
            self.ended.emit(run)
