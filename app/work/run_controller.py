"""A run's life: start it on the decode worker, fold the worker's event batches into its record, and end
it on done or failure. One run decodes at a time; every run stays in the session."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.errors import Failure
from app.runs.clip import AudioClip
from app.runs.record import RunRecord
from app.runs.session import Session
from app.work.decode_worker import TranscribeWorker, WorkerThread
from core.decode.options import DecodeOptions
from core.decode.window_choice import WindowRule
from device.link.profile import DeviceProfile


class RunController(QObject):
    updated = Signal(object)       # RunRecord that received events
    ended = Signal(object)         # RunRecord: done, cancelled or failed
    failed = Signal(object)        # Failure from the worker (of a run, or of connecting)

    def __init__(self, session: Session, worker: TranscribeWorker, parent=None):
        super().__init__(parent)
        self.session = session
        self.worker = worker
        self.worker_thread = WorkerThread(worker)
        self.active: RunRecord | None = None       # the run decoding now
        worker.events.connect(self._on_events)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        worker.loading.connect(self._on_loading)
        worker.npu_profile.connect(self._on_npu_profile)

    def start(self, clip: AudioClip, options: DecodeOptions, profile: DeviceProfile, password: str,
              device_info: dict, window: WindowRule | None = None) -> RunRecord | None:
        """A new run of the session, decoding on the worker; None while another run decodes. `window`: the encoder
        window's rule, which the worker applies once the runner says which windows it serves."""
        if self.active is not None:
            return None
        run = self.session.new_run(clip.name, options, profile.url(), device_info, clip.duration_s)
        run.clip, run.audio_path, run.audio_sha256 = clip, clip.path, clip.sha256
        run.qa_floor = profile.qa_floor()
        self.active = run
        run.runner_loading = not self.worker.is_connected(profile)
        self.worker.request_transcribe(run.id, clip.mels, options, profile, password, n_frames=clip.n_frames,
                                       window=window)
        return run

    def stop(self) -> bool:
        """Cancel the decoding run; its done event (reason cancelled) ends it. False when none decodes."""
        if self.active is None:
            return False
        self.worker.cancel()
        return True

    def close(self) -> None:
        self.worker_thread.stop()

    def _on_loading(self, run_id: int) -> None:
        run = self.session.by_id(run_id)
        if run is not None:
            run.runner_loading = True
            self.updated.emit(run)

    def _on_npu_profile(self, run_id: int, found: list) -> None:
        run = self.session.by_id(run_id)
        if run is not None:
            run.npu_profile = found

    def _on_events(self, run_id: int, batch: list) -> None:
        run = self.session.by_id(run_id)
        if run is None:
            return
        run.add_batch(batch)
        self.updated.emit(run)

    def _on_finished(self, run_id: int) -> None:
        run = self.session.by_id(run_id)
        if run is not None:
            self._end(run)

    def _on_failed(self, run_id: int, failure: Failure) -> None:
        run = self.session.by_id(run_id)
        if run is not None:
            run.error = failure.to_dict()
        self.failed.emit(failure)
        if run is not None:
            self._end(run)

    def _end(self, run: RunRecord) -> None:
        if run is self.active:
            self.active = None
        self.ended.emit(run)
