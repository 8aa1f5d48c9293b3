"""The decode worker: lives on its own QThread, keeps one decoder (device/link/decoder.py: one runner) per
device, feeds it a run's windows through the host's one seek loop (core/decode/window_feed.py), and turns
the runner's events into Qt signals. The UI thread only ever sends it requests and calls cancel().

After the runner died or the link dropped, the next connect (the next run, or Restart runner) retries with
a short backoff (app/board/reconnect.py), here on the worker's thread, so the window never waits."""
from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Callable

import numpy as np
from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.board.form_terms import in_form_terms
from app.board.link import make_decoder
from app.board.reconnect import reconnect
from app.errors import RESTARTABLE, Failure, failure_of
from core.decode.events import TokenEvent
from core.decode.options import DecodeOptions
from core.decode.window_choice import WindowRule
from core.decode.window_feed import HeldMels, decode_source
from core.model.mel import N_FRAMES
from core.model.npu_profile import profiles, to_json
from device.link.profile import DeviceProfile

BATCH_S = 0.02


class Batcher:
    """Hands events to the UI at most every BATCH_S. One queued signal per token floods the UI thread's
    event queue when tokens come faster than it paints; a token that follows a pause still goes at once."""

    def __init__(self, send: Callable[[list], None]):
        self.send = send
        self.items: list = []
        self.last = 0.0

    def add(self, item, urgent: bool = False) -> None:
        self.items.append(item)
        now = time.monotonic()
        if urgent or now - self.last >= BATCH_S:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if self.items:
            items, self.items = self.items, []
            self.send(items)
        self.last = now if now is not None else time.monotonic()


class TranscribeWorker(QObject):
    connected = Signal(dict)               # runner summary (hello)
    loading = Signal(int)                  # run id: the runner is starting and loading its model for this run
    events = Signal(int, list)             # run id, [(core event, host ms since the request was sent)]
    finished = Signal(int)                 # run id; the run ended with a done event
    failed = Signal(int, object)           # run id (0 when connecting), Failure
    samples = Signal(int, dict)            # run id, a `sample` event: what the board pays (docs/protocol.md)
    npu_profile = Signal(int, list)        # run id, its per-op times a graph (core/model/npu_profile.py), before
                                           # its finished/failed, from a runner started with the profiler on

    # Requests from the UI thread arrive through these queued signals.
    _connect_requested = Signal(object, str)
    _transcribe_requested = Signal(int, object, object, object, str, object, object)
    _restart_requested = Signal(object, str)

    def __init__(self, decoder_factory: Callable = make_decoder):
        super().__init__()
        self.decoder_factory = decoder_factory
        self.decoder = None
        self.profile: DeviceProfile | None = None
        self._cancel = threading.Event()
        self._lost = False      # the runner died or the link dropped: the next connect retries with a backoff
        self._connect_requested.connect(self._connect)
        self._transcribe_requested.connect(self._transcribe)
        self._restart_requested.connect(self._restart)

    # --- called from the UI thread --------------------------------------------------------------

    def request_connect(self, profile: DeviceProfile, password: str = "") -> None:
        self._connect_requested.emit(profile, password)

    def request_transcribe(self, run_id: int, mels: np.ndarray, options: DecodeOptions, profile: DeviceProfile,
                           password: str = "", n_frames: int | None = None, window: WindowRule | None = None) -> None:
        """`window`: the encoder window's rule, applied once the runner's hello says which it serves; None: the
        options' window_s as it is."""
        self._cancel.clear()
        self._transcribe_requested.emit(run_id, mels, options, profile, password, n_frames, window)

    def request_restart(self, profile: DeviceProfile, password: str = "") -> None:
        """Start the runner again; `connected` or `failed` (run id 0) answers."""
        self._cancel.clear()
        self._restart_requested.emit(profile, password)

    def cancel(self) -> None:
        """Thread-safe: the runner stops between steps and answers done(cancelled)."""
        self._cancel.set()
        decoder = self.decoder
        if decoder is not None:
            try:
                decoder.cancel()
            except Exception:  # the link may already be gone; the decode loop reports that
                pass

    # --- on the worker thread -------------------------------------------------------------------

    @Slot(object, str)
    def _connect(self, profile: DeviceProfile, password: str) -> None:
        try:
            self.ensure_decoder(profile, password)
        except Exception as exc:
            self.failed.emit(0, in_form_terms(failure_of(exc)))

    @Slot(object, str)
    def _restart(self, profile: DeviceProfile, password: str) -> None:
        self._lost = True
        self.close()
        self._connect(profile, password)

    def is_connected(self, profile: DeviceProfile) -> bool:
        """A runner for `profile` is up and said hello (read from any thread; a stale answer only
        mislabels the first moment of a run)."""
        decoder, current = self.decoder, self.profile
        return (decoder is not None and decoder.info is not None and current is not None
                and current.url() == profile.url())

    def ensure_decoder(self, profile: DeviceProfile, password: str = "", run_id: int = 0):
        """The worker's connected decoder for `profile`, its runner started (again, with a backoff, after a lost
        link) when it is not up. Only on the worker's thread: a run's requests and a live stream's share it."""
        if self.is_connected(profile):
            return self.decoder
        if run_id:
            self.loading.emit(run_id)
        if self._lost:
            where = profile.url().split("?")[0]
            decoder = reconnect(lambda: self._open(profile, password), self._cancel.wait, where)
        else:
            decoder = self._open(profile, password)
        self._lost = False
        return decoder

    def request_failure(self, exc: Exception) -> Failure:
        """What a request's exception tells the user; a lost link or runner also means the next request
        starts a runner again (with a backoff)."""
        failure = in_form_terms(failure_of(exc))
        if failure.code in RESTARTABLE:
            self._lost = True
            self.close()
        return failure

    def _open(self, profile: DeviceProfile, password: str):
        self.close()
        self.profile = profile
        self.decoder = self.decoder_factory(profile, password)  # set first: close() from the UI thread ends a hang
        try:
            info = self.decoder.connect()
        except Exception:
            self.close()
            raise
        self.connected.emit(info.summary())
        return self.decoder

    @Slot(int, object, object, object, str, object, object)
    def _transcribe(self, run_id: int, mels: np.ndarray, options: DecodeOptions, profile: DeviceProfile,
                    password: str, n_frames: int | None, window: WindowRule | None) -> None:
        batch = Batcher(lambda items: self.events.emit(run_id, items))
        decoder = None
        try:
            decoder = self.ensure_decoder(profile, password, run_id)
            decoder.on_sample = lambda sample: self.samples.emit(run_id, sample)
            decoder.new_run()
            if options.wants_attention and not decoder.takes("attention"):
                # a .dla step has no attention output: the run goes without, rather than the runner refusing it
                options = replace(options, attention=False, word_timestamps=False)
            if window is not None:
                options = replace(options, window_s=window.window_for(n_frames or len(mels) * N_FRAMES,
                                                                      decoder.info.windows))
            t0, cancel_sent = time.monotonic(), False
            for ev in decode_source(HeldMels(mels, n_frames or 0), options, decoder, self._cancel.is_set):
                # ms since the run's first request went out, as the event arrived
                batch.add((ev, (decoder.last_t - t0) * 1e3), urgent=not isinstance(ev, TokenEvent))
                if self._cancel.is_set() and not cancel_sent:
                    decoder.cancel()  # covers a Stop pressed before the request had an id
                    cancel_sent = True
        except Exception as exc:
            batch.flush()
            if decoder is not None:
                self._profiled(run_id, decoder)    # the windows that ran keep theirs
            failure = self.request_failure(exc)
            self.failed.emit(run_id, failure)
            return
        batch.flush()
        self._profiled(run_id, decoder)
        self.finished.emit(run_id)

    def _profiled(self, run_id: int, decoder) -> None:
        target = getattr(decoder, "target", None)
        if target is not None and target.npu_profile:
            self.npu_profile.emit(run_id, to_json(profiles(decoder.npu_files())))

    @Slot()
    def close(self) -> None:
        decoder, self.decoder = self.decoder, None
        if decoder is not None:
            try:
                decoder.close()   # its transport too: each SSH transport holds a login
            except Exception:  # closing a dead link is not worth a dialog
                pass


class WorkerThread:
    """Starts the worker on its own thread and stops both cleanly."""

    def __init__(self, worker: TranscribeWorker):
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName("transcribe-worker")
        worker.moveToThread(self.thread)
        self.thread.start()

    def stop(self, ms: int = 5000) -> None:
        self.worker.cancel()
        self.thread.quit()
        if not self.thread.wait(ms):
            self.worker.close()  # a runner still loading: closing its link ends the blocked read
            self.thread.wait(ms)
        self.worker.close()
