"""Drives a StreamPolicy from a source of audio blocks.

- `stream_fast`: a file as fast as possible; the stream clock is the audio fed, so commit lag leaves out
  compute time.
- `stream_live`: a source that delivers audio as it happens (a microphone, or `realtime_blocks` pacing a
  file at 1x); a reader thread keeps taking blocks while a pass runs, and the stream clock is the audio
  taken so far, so compute time shows in the lag as it would for a listener.
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Callable, Iterable, Iterator

import numpy as np

from core.model.audio import SAMPLE_RATE
from core.stream.events import StreamEvent
from core.stream.policy import StreamPolicy

OnEvent = Callable[[StreamEvent], None]


def blocks_of(audio: np.ndarray, block_s: float = 0.1) -> Iterator[np.ndarray]:
    step = max(1, int(block_s * SAMPLE_RATE))
    for i in range(0, len(audio), step):
        yield audio[i:i + step]


def realtime_blocks(audio: np.ndarray, block_s: float = 0.1, speed: float = 1.0,
                    sleep: Callable[[float], None] = time.sleep) -> Iterator[np.ndarray]:
    """The audio in blocks, each delivered once it has "been spoken" at `speed` x real time (as a
    microphone delivers a block once it is recorded)."""
    t0 = time.monotonic()
    done = 0
    for block in blocks_of(audio, block_s):
        done += len(block)
        wait = t0 + done / SAMPLE_RATE / speed - time.monotonic()
        if wait > 0:
            sleep(wait)
        yield block


def stream_fast(blocks: Iterable[np.ndarray], policy: StreamPolicy, on_event: OnEvent,
                should_stop: Callable[[], bool] = lambda: False) -> None:
    for block in blocks:
        if should_stop():
            break
        policy.feed(block)
        while policy.due():
            for ev in policy.run_pass():
                on_event(ev)
    for ev in policy.finish():
        on_event(ev)


class LiveClock:
    """Samples taken from the source so far, read by the policy from the decoding thread; once the source
    ended, time goes on as for a listener waiting for the last words (the last pass's compute shows in them)."""

    def __init__(self):
        self.samples = 0
        self.ended_at: float | None = None

    def __call__(self) -> float:
        waited = time.monotonic() - self.ended_at if self.ended_at is not None else 0.0
        return self.samples / SAMPLE_RATE + waited


def stream_live(blocks: Iterable[np.ndarray], make_policy: Callable[[LiveClock], StreamPolicy], on_event: OnEvent,
                should_stop: Callable[[], bool] = lambda: False) -> StreamPolicy:
    """Read `blocks` on a thread, run passes on this one; returns the policy once the source ended and the rest
    was heard out and committed, or once `should_stop()` (checked between passes: no pass starts after it) and
    the last pass's words were committed. An error in the source is raised here."""
    clock = LiveClock()
    policy = make_policy(clock)
    inbox: queue.Queue = queue.Queue()
    done = threading.Event()

    def read():
        try:
            for block in blocks:
                block = np.asarray(block, np.float32).reshape(-1)
                clock.samples += len(block)
                inbox.put(block)
                if should_stop() or done.is_set():
                    break
            clock.ended_at = time.monotonic()
            inbox.put(None)
        except BaseException as exc:      # handed to the decoding thread, which raises it
            inbox.put(exc)

    reader = threading.Thread(target=read, name="stream-source", daemon=True)
    reader.start()
    try:
        ended = False
        while not ended and not should_stop():
            # Everything that arrived goes in before each pass, so a pass always takes the latest audio.
            items = [] if policy.due() else [inbox.get()]
            while not inbox.empty():
                items.append(inbox.get_nowait())
            for item in items:
                if isinstance(item, BaseException):
                    raise item
                if item is None:
                    ended = True
                else:
                    policy.feed(item)
            if policy.due() and not should_stop():
                for ev in policy.run_pass():
                    on_event(ev)
        for ev in policy.stop() if should_stop() else policy.finish():
            on_event(ev)
    finally:
        done.set()
    return policy
