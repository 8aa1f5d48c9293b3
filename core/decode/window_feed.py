"""Long audio as one request per 30 s window: the mel is computed, sent and decoded window by window,
so neither the host nor the runner holds more than a window or two of it, however long the audio.

The events are those `decode_windows` yields for the whole mel at once: the same windows (consecutive
30 s, or Whisper's seek in timestamps mode), the language detected in the first window kept for the
rest, and each window's events placed at its index and its offset in the audio."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator

import numpy as np

from core.decode.attention_focus import frame_energy
from core.decode.events import DoneEvent, EncodedEvent, Event
from core.decode.options import DecodeOptions, for_length
from core.model.mel import FRAMES_PER_SECOND, N_FRAMES
from core.model.mel_file import MelSource

# One window's decode: (mel [1, 80, 3000], options, frames holding audio) → that window's events, its done
# last (a runner request, or the in-process model); it is closed once the done arrived.
DecodeOne = Callable[[np.ndarray, DecodeOptions, int], Iterator[Event]]


def decode_source(source: MelSource, options: DecodeOptions, decode_one: DecodeOne,
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
        events = decode_one(mel[None], replace(options, language=language), size)
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
