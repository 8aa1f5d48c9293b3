"""The studio's Live mode off the UI thread: runs a live stream (core/stream) on the decode worker's thread,
through its runner, from the microphone or from the loaded clip at 1x, and hands the stream's events to the
UI in batches. Stop ends the stream: what was heard is still committed."""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from app.audio.recorder import sounddevice_stream
from app.board.profile import DeviceProfile
from app.board.worker import Batcher, TranscribeWorker
from app.errors import failure_of
from core.model.audio import SAMPLE_RATE
from core.stream.events import PassRecord


class LiveWorker(QObject):
    events = Signal(list)           # [StreamEvent], in order
    ended = Signal(dict)            # core.stream.stats.stream_summary of the whole stream
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

        batch = Batcher(self.events.emit)
        collected: list = []

        def on_event(ev):
            collected.append(ev)
            batch.add(ev, urgent=not isinstance(ev, PassRecord))

        try:
            client = self.transcriber._ensure_client(profile, password)   # the worker's runner, on its thread
            decode_one, tokenizer = window_decoder(client), WhisperTokenizer.from_file(find_tokenizer())
            warm_up(decode_one, language)
            gate = VoiceGate(SileroVad())
            blocks = (realtime_blocks(samples) if samples is not None
                      else mic_blocks(self.stream_factory, mic_device, should_stop=self._stop.is_set))
            config = StreamConfig(language=language)
            policy = stream_live(blocks, lambda clock: StreamPolicy(decode_one, tokenizer, config, gate, clock,
                                                                    "prompt" in client.info.features),
                                 on_event, self._stop.is_set)
            batch.flush()
            self.ended.emit(stream_summary(collected, policy.fed / SAMPLE_RATE) | {"language": policy.language or "",
                                                                                   "backend": client.info.backend})
        except Exception as exc:
            batch.flush()
            self.failed.emit(failure_of(exc))
        finally:
            self.running = False
