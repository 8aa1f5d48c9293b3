"""The studio's Live mode off the UI thread: runs a live stream (core/stream) on the decode worker's thread,
through its runner, from the microphone or from the loaded clip at 1x, and hands the stream's events to the
UI in batches, with every pass's runner events (one window per pass, host arrival times) for the stream's run
of the session. Stop ends the stream: what was heard is still committed. If the link dies, `failed` comes
first and then `ended` with what the stream had committed until then."""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from app.board.profile import DeviceProfile
from app.board.worker import Batcher, TranscribeWorker
from app.runs.live import END_OF_STREAM, STOPPED, recording_decoder
from core.decode.events import TokenEvent
from core.model.audio import SAMPLE_RATE
from core.stream.events import PassRecord
from core.stream.mic import sounddevice_stream


class LiveWorker(QObject):
    events = Signal(list)           # [StreamEvent], in order
    runner_events = Signal(list)    # [(EncodedEvent | TokenEvent | DoneEvent, host ms since the stream began)]
    ended = Signal(dict)            # core.stream.stats.stream_summary of the whole stream, and "end": how it ended
    failed = Signal(object)         # Failure
    _start_requested = Signal(object, object, object, str, object)

    def __init__(self, transcriber: TranscribeWorker, stream_factory: Callable = sounddevice_stream):
        super().__init__()
        self.transcriber, self.stream_factory = transcriber, stream_factory
        self._stop = threading.Event()
        self.running = False
        self.moveToThread(transcriber.thread())     # one runner: its requests never interleave with a run's
        self._start_requested.connect(self._run)

    # --- called from the UI thread ----------------------------------------------------------------
    def start(self, samples: np.ndarray | None, mic_device: int | None, profile: DeviceProfile, password: str = "",
              language: str | None = None) -> None:
        """samples: the clip to play at 1x, or None for the microphone `mic_device`."""
        self._stop.clear()
        self.running = True
        self._start_requested.emit(samples, mic_device, profile, password, language)

    def stop(self) -> None:
        self._stop.set()

    # --- on the worker thread ---------------------------------------------------------------------
    @Slot(object, object, object, str, object)
    def _run(self, samples, mic_device, profile: DeviceProfile, password: str, language) -> None:
        from core.model.tokenizer import WhisperTokenizer
        from core.model.weights import find_tokenizer
        from core.stream.feed import realtime_blocks, stream_live
        from core.stream.mic import mic_blocks
        from core.stream.one_pass import warm_up
        from core.stream.policy import StreamConfig, StreamPolicy
        from core.stream.stats import stream_summary
        from core.stream.vad import SileroVad, VoiceGate
        from device.link.client import window_decoder

        batch, telemetry = Batcher(self.events.emit), Batcher(self.runner_events.emit)
        collected: list = []
        policies: list = []
        backend = ""

        def on_event(ev):
            collected.append(ev)
            batch.add(ev, urgent=not isinstance(ev, PassRecord))

        def make_policy(clock):
            policies.append(StreamPolicy(decode_one, tokenizer, config, gate, clock, "prompt" in client.info.features))
            return policies[0]

        try:
            client = self.transcriber._ensure_client(profile, password)   # the worker's runner, on its thread
            backend = client.info.backend
            decode_one, tokenizer = window_decoder(client), WhisperTokenizer.from_file(find_tokenizer())
            warm_up(decode_one, language)
            decode_one = recording_decoder(decode_one, lambda ev, ms: telemetry.add(
                (ev, ms), urgent=not isinstance(ev, TokenEvent)),
                buffer_start_s=lambda: policies[0].buffer_start_s if policies else 0.0)
            gate = VoiceGate(SileroVad())
            blocks = (realtime_blocks(samples) if samples is not None
                      else mic_blocks(self.stream_factory, mic_device, should_stop=self._stop.is_set))
            config = StreamConfig(language=language)
            stream_live(blocks, make_policy, on_event, self._stop.is_set)
            end = STOPPED if self._stop.is_set() else END_OF_STREAM
        except Exception as exc:
            telemetry.flush()       # what the stream got before the failure reaches the run before its error
            batch.flush()
            failure = self.transcriber.request_failure(exc)   # as a run's: a lost runner restarts next time
            self.failed.emit(failure)
            end = "error"
        telemetry.flush()
        batch.flush()
        policy = policies[0] if policies else None
        fed_s = policy.fed / SAMPLE_RATE if policy else 0.0
        self.running = False
        self.ended.emit(stream_summary(collected, fed_s) | {"language": (policy and policy.language) or "",
                                                            "backend": backend, "end": end})
