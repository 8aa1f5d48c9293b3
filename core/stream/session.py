"""One live session, whatever shows it: `whisperkv stream`, the studio's Live tab and the stream benchmarks build
this and choose only the audio source and what to do with each event.

    session = StreamSession(decoder.window, tokenizer, StreamConfig(language="en"), takes_prompt=True,
                            on_event=print)
    summary = session.run(blocks, live=True)     # from another thread: session.stop()

It owns the Silero VAD gate, the warm-up before a live clock starts, the prompt check (a runner that takes no
prompt streams without one), the policy and its parameters (StreamConfig.params, from the table in
core/stream/policies.py), the stop flag (checked between passes: no pass starts after it), every event, and the
summary (core/stream/stats.py plus the language and the policy that ran).
"""
from __future__ import annotations

import threading
from typing import Callable, Iterable

import numpy as np

from core.decode.window_choice import sized_windows
from core.decode.window_feed import DecodeOne
from core.model.audio import SAMPLE_RATE
from core.model.dims import FULL_WINDOW_S
from core.model.tokenizer import WhisperTokenizer
from core.stream.events import StreamEvent
from core.stream.feed import stream_fast, stream_live
from core.stream.one_pass import warm_up
from core.stream.policies import policy_summary
from core.stream.policy import StreamConfig, StreamPolicy
from core.stream.stats import stream_summary
from core.stream.vad import SileroVad, VoiceGate


class StreamSession:
    def __init__(self, decode_one: DecodeOne, tokenizer: WhisperTokenizer, config: StreamConfig | None = None, *,
                 vad: bool = True, takes_prompt: bool = True, windows: tuple[int, ...] = (FULL_WINDOW_S,),
                 on_event: Callable[[StreamEvent], None] = lambda event: None,
                 watch: Callable[[DecodeOne], DecodeOne] | None = None, stop: threading.Event | None = None):
        """`vad`: False streams every second (no gate). `takes_prompt`, `windows` (the encoder windows served):
        what the runner's hello says.
        `watch`: wraps the passes' decoder (never the warm-up's), e.g. to record each pass's runner events.
        `stop`: the stop flag, when the caller set it up before the session (a Ctrl-C handler, while connecting)."""
        self.decode_one, self.tokenizer = decode_one, tokenizer
        self.config = config or StreamConfig()
        self.gate = VoiceGate(SileroVad()) if vad else None
        self.takes_prompt, self.windows, self.watch, self.on_event = takes_prompt, windows, watch, on_event
        self.events: list[StreamEvent] = []
        self.policy: StreamPolicy | None = None
        self._stop = stop or threading.Event()

    @property
    def prompt_refused(self) -> bool:
        """The config asks for a prompt that the runner cannot take: the stream goes without one."""
        return not self.takes_prompt and self.config.prompt_chars > 0

    @property
    def windows_used(self) -> tuple[int, ...]:
        """The windows a pass may ask for (the warm-up's)."""
        return sized_windows(self.windows, self.config.params["window_floor_s"])

    def stop(self) -> None:
        """Thread-safe: no pass starts after it; what the last pass heard is committed."""
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    @property
    def buffer_start_s(self) -> float:
        """Where the buffer of the pass that runs now starts, in seconds of the stream."""
        return self.policy.buffer_start_s if self.policy else 0.0

    def run(self, blocks: Iterable[np.ndarray], live: bool, warm: bool | None = None) -> dict:
        """Stream `blocks`: `live` (a microphone, a file at 1x) reads them on a thread and runs on the audio's clock;
        else as fast as they come, on the clock of the audio fed. `warm` (default: `live`) runs one pass on
        silence first, so the first real pass does not pay the runner's first-call costs."""
        if live if warm is None else warm:
            warm_up(self.decode_one, self.config.language, self.windows_used)
        decode = self.watch(self.decode_one) if self.watch else self.decode_one

        def make_policy(clock=None) -> StreamPolicy:
            self.policy = StreamPolicy(decode, self.tokenizer, self.config, self.gate, clock,
                                       use_prompt=self.takes_prompt, windows=self.windows)
            return self.policy

        if live:
            if not self.stopped:      # stopped while the runner started or warmed up: no pass at all
                stream_live(blocks, make_policy, self._event, self._stop.is_set)
        else:
            stream_fast(blocks, make_policy(), self._event, self._stop.is_set)
        return self.summary()

    def summary(self, speech_start_s: float | None = None) -> dict:
        """The stream's figures and JSON document so far (also after a failure: what it had committed)."""
        fed_s = self.policy.fed / SAMPLE_RATE if self.policy else 0.0
        language = (self.policy.language if self.policy else None) or ""
        return (stream_summary(self.events, fed_s, speech_start_s) | {"language": language}
                | policy_summary(self.config))

    def _event(self, event: StreamEvent) -> None:
        self.events.append(event)
        self.on_event(event)
