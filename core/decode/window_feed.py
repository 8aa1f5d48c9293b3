"""The host's one seek loop: audio of any length as one decode per 30 s window (one runner request, or one call
of the in-process model), the mel computed, sent and decoded window by window, so neither the host nor the
runner holds more than a window or two of it, however long the audio.

The windows are consecutive 30 s, or Whisper's seek in timestamps mode (each next window starts after the
last complete segment); the language detected in the first window holds for the rest, and each window's
events are placed at its index and its offset in the audio."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Protocol

import numpy as np

from core.decode.attention_focus import frame_energy
from core.decode.events import DoneEvent, EncodedEvent, Event
from core.decode.options import DecodeOptions, for_length
from core.model.mel import FRAMES_PER_SECOND, N_FRAMES
from core.model.mel_file import WindowCursor

# One window's decode: (mel [1, 80, 3000], options, frames holding audio) → that window's events, its done
# last (a runner request, or the in-process model); it is closed once the done arrived.
DecodeOne = Callable[[np.ndarray, DecodeOptions, int], Iterator[Event]]


class WindowSource(Protocol):
    """What the loop reads: core.model.mel_file.MelSource (a file or samples), or HeldMels."""

    n_frames: int

    def cursor(self) -> WindowCursor: ...


@dataclass
class HeldMels:
    """Mel windows already computed and held, [W, 80, 3000] (core.model.mel.mel_windows): the studio's clip."""

    mels: np.ndarray = field(repr=False)
    n_frames: int = 0              # frames that hold audio; 0: every frame of every window

    def __post_init__(self):
        self.mels = np.asarray(self.mels).reshape(-1, *np.shape(self.mels)[-2:])
        self.n_frames = min(self.n_frames or self.mels.shape[0] * N_FRAMES, self.mels.shape[0] * N_FRAMES)

    def cursor(self) -> WindowCursor:
        return WindowCursor(iter(self.mels), self.n_frames)


def decode_source(source: WindowSource, options: DecodeOptions, decode_one: DecodeOne,
                  should_cancel: Callable[[], bool] = lambda: False,
                  levels: dict[int, np.ndarray] | None = None) -> Iterator[Event]:
    """`levels`, when given, receives each window's per-frame loudness (core/decode/attention_focus.py), from the
    mel in hand: what the verdict needs to place the EOT step's attention, at 12 KB a window."""
    cursor = source.cursor()
    options = for_length(options, source.n_frames)
    language, seek, window = options.language, 0, 0
    while seek < source.n_frames and not should_cancel():
        size = min(N_FRAMES, source.n_frames - seek)
        mel = cursor.at(seek)
        if levels is not None:
            levels[window] = frame_energy(mel, size)
        # a draft is of the first window's tokens only
        events = decode_one(mel[None], replace(options, language=language, draft=options.draft if not window else []),
                            size)
        done = None
        try:
            for ev in events:
                ev = placed(ev, window, seek / FRAMES_PER_SECOND)
                language = ev.language if isinstance(ev, EncodedEvent) else language
                yield ev
                if isinstance(ev, DoneEvent):
                    done = ev
                    break
        finally:
            getattr(events, "close", lambda: None)()
        if done is None or done.reason == "cancelled":
            return
        seek += done.seek_frames if options.timestamp_tokens else N_FRAMES
        window += 1
    if seek < source.n_frames:     # cancelled between windows: the run still ends with a done, as a runner's does
        yield DoneEvent(window, "cancelled", [], "", 0.0, language or "", offset_s=seek / FRAMES_PER_SECOND)


def placed(ev: Event, window: int, offset_s: float) -> Event:
    """A window's event, decoded as window 0 at 0 s, moved to `window` at `offset_s` seconds."""
    if isinstance(ev, EncodedEvent):
        return replace(ev, window=window, offset_s=ev.offset_s + offset_s)
    if isinstance(ev, DoneEvent):
        segments = [{**g, "start": round(g["start"] + offset_s, 3), "end": round(g["end"] + offset_s, 3)}
                    for g in ev.segments]
        words = [{**w, "start": round(w["start"] + offset_s, 2), "end": round(w["end"] + offset_s, 2)}
                 for w in ev.words]
        return replace(ev, window=window, offset_s=ev.offset_s + offset_s, segments=segments, words=words)
    return replace(ev, window=window)
