"""The studio's Live mode off the UI thread: runs a live stream (core/stream) on the decode worker's thread,
through its runner, from the microphone or from the loaded clip at 1x, and hands the stream's events to the
UI in batches, with every pass's runner events (one window per pass, host arrival times) for the stream's run
of the session. `stop` is called on the UI thread, never queued to this object's (it runs the stream): it sets
a flag the stream checks between passes, so no pass starts after it, and what the last pass heard is committed.
If the link dies, `failed` comes first and then `ended` with what the stream had committed until then."""
from __future__ import annotations

import contextlib
import threading
from typing import Callable

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from app.runs import token_names
from app.runs.live import END_OF_STREAM, STOPPED, recording_decoder
from app.work.decode_worker import Batcher, TranscribeWorker
from core.decode.events import TokenEvent
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from core.stream.events import PassRecord
from core.stream.feed import realtime_blocks
from core.stream.mic import mic_blocks, sounddevice_stream
from core.stream.policies import DEFAULT_POLICY
from core.stream.policy import StreamConfig
from core.stream.session import StreamSession
from core.stream.stats import stream_summary
from device.link.profile import DeviceProfile


class LiveWorker(QObject):
    events = Signal(list)           # [StreamEvent], in order
    runner_events = Signal(list)    # [(EncodedEvent | TokenEvent | DoneEvent, host ms since the stream began)]
    ended = Signal(dict)            # core.stream.stats.stream_summary of the whole stream, and "end": how it ended
    failed = Signal(object)         # Failure
    _start_requested = Signal(object, object, object, str, object)
    _preload_requested = Signal()

    def __init__(self, transcriber: TranscribeWorker, stream_factory: Callable = sounddevice_stream):
        super().__init__()
        self.transcriber, self.stream_factory = transcriber, stream_factory
        self._stop = threading.Event()
        self.running = False
        self.moveToThread(transcriber.thread())     # one runner: its requests never interleave with a run's
        self._start_requested.connect(self._run)
        self._preload_requested.connect(self._preload)
        self._preload_requested.emit()

    # --- called from the UI thread ----------------------------------------------------------------
    def start(self, samples: np.ndarray | None, mic_device: int | None, profile: DeviceProfile, password: str = "",
              language: str | None = None, policy: str | None = None, params: dict | None = None) -> None:
        """samples: the clip to play at 1x, or None for the microphone `mic_device`; `policy`: the commit rule
        and `params` its parameters (core/stream/policies.py; None: their defaults)."""
        self._stop.clear()
        self.running = True
        self._start_requested.emit(samples, mic_device, profile, password, (language, policy, params))

    def stop(self) -> None:
        """Thread-safe; a plain call from the UI thread (a signal connected to it would queue behind the stream)."""
        self._stop.set()

    # --- on the worker thread ---------------------------------------------------------------------
    @Slot()
    def _preload(self) -> None:
        """At start-up, on this thread: import ONNX Runtime (the VAD's). Its import holds the GIL for 30-70 ms,
        which at a stream's start froze the window that long; a stream that needs it says what is missing."""
        with contextlib.suppress(ImportError):
            import onnxruntime  # noqa: F401

    @Slot(object, object, object, str, object)
    def _run(self, samples, mic_device, profile: DeviceProfile, password: str, asked) -> None:
        language, policy_name, params = asked
        batch, telemetry = Batcher(self.events.emit), Batcher(self.runner_events.emit)
        session, backend, end = None, "", END_OF_STREAM
        try:
            # A bad parameter fails here, as the stream's error, before the runner is asked for anything.
            config = StreamConfig(language=language, policy=policy_name or DEFAULT_POLICY, params=params or {})
            decoder = self.transcriber.ensure_decoder(profile, password)   # the worker's runner, on its thread
            decoder.new_run()
            backend = decoder.info.backend
            # The studio's tokenizer, read once at start-up: reading it holds the GIL for 80-300 ms, and done here at
            # every stream's start it froze the window that long.
            tokenizer = token_names.tokenizer() or WhisperTokenizer.from_file(find_tokenizer())
            session = StreamSession(
                decoder.window, tokenizer, config, takes_prompt=decoder.takes("prompt"), windows=decoder.info.windows,
                stop=self._stop,
                on_event=lambda ev: batch.add(ev, urgent=not isinstance(ev, PassRecord)),
                watch=lambda decode_one: recording_decoder(decode_one, lambda ev, ms: telemetry.add(
                    (ev, ms), urgent=not isinstance(ev, TokenEvent)), buffer_start_s=lambda: session.buffer_start_s))
            blocks = (realtime_blocks(samples) if samples is not None
                      else mic_blocks(self.stream_factory, mic_device, should_stop=self._stop.is_set))
            session.run(blocks, live=True)
            end = STOPPED if self._stop.is_set() else END_OF_STREAM
        except Exception as exc:
            telemetry.flush()       # what the stream got before the failure reaches the run before its error
            batch.flush()
            failure = self.transcriber.request_failure(exc)   # as a run's: a lost runner restarts next time
            self.failed.emit(failure)
            end = "error"
        telemetry.flush()
        batch.flush()
        self.running = False
        summary = session.summary() if session else stream_summary([], 0.0) | {"language": "",
                                                                                 "policy": policy_name or DEFAULT_POLICY}
        self.ended.emit(summary | {"backend": backend, "end": end})
