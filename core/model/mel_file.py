"""Whisper's log-mel of audio of any length, one 30 s window at a time, in memory that does not grow
with the duration: a few windows of samples and of mel, however long the file."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from core.model.audio import audio_blocks
from core.model.mel import N_FRAMES, normalise, pad_or_trim, raw_windows

KEEP_WINDOWS = 4     # a file of up to 2 minutes is read once: its windows are kept from the scan


@dataclass
class MelSource:
    """The normalised log-mel of some audio, window by window.

    Normalisation needs the loudest value of the whole audio before the first window can be sent, so
    `scan` reads all of it once (finding any bad sample before decoding starts) and `windows` reads it
    again, unless it was short enough to keep."""
    blocks: Callable[[], Iterable[np.ndarray]] = field(repr=False)   # the audio, from its start, each call
    n_frames: int = 0              # mel frames that hold audio (the rest of the last window is padding)
    top: np.float32 = np.float32(0)
    kept: list[np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def scan(cls, blocks: Callable[[], Iterable[np.ndarray]]) -> "MelSource":
        n, top, kept = 0, None, []
        for logs in raw_windows(blocks()):
            n += logs.shape[-1]
            top = logs.max() if top is None else max(top, logs.max())
            kept = None if kept is None or len(kept) == KEEP_WINDOWS else [*kept, logs]
        return cls(blocks, n, top, kept)

    @classmethod
    def of_file(cls, path: str | Path) -> "MelSource":
        """AudioError (missing, unreadable, NaN/Inf, no samples) is raised here, by the scan."""
        return cls.scan(lambda: audio_blocks(path))

    @classmethod
    def of_audio(cls, audio: np.ndarray) -> "MelSource":
        return cls.scan(lambda: [np.asarray(audio, np.float32)])

    def windows(self) -> Iterator[np.ndarray]:
        """Consecutive [80, ≤3000] normalised windows, not padded."""
        for logs in self.kept if self.kept is not None else raw_windows(self.blocks()):
            yield normalise(logs, self.top)

    def cursor(self) -> "WindowCursor":
        return WindowCursor(self.windows(), self.n_frames)


class WindowCursor:
    """[80, 3000] windows that start at any frame, for starts that only move forward (Whisper's
    timestamps mode starts the next window at the last timestamp): at most two windows are held."""

    def __init__(self, windows: Iterator[np.ndarray], n_frames: int):
        self._windows, self.n_frames = windows, n_frames
        self._held: list[np.ndarray] = []
        self._first = 0          # the frame where _held[0] starts

    def at(self, start: int) -> np.ndarray:
        """Frames start..start + 3000, padded with 0.0 after the audio's end."""
        while self._held and self._first + self._held[0].shape[-1] <= start:
            self._first += self._held.pop(0).shape[-1]
        stop = min(start + N_FRAMES, self.n_frames)
        while self._first + sum(m.shape[-1] for m in self._held) < stop:
            self._held.append(next(self._windows))
        if start < self._first:
            raise ValueError(f"window start {start} is before frame {self._first}: starts only move forward")
        held = self._held[0] if len(self._held) == 1 else np.concatenate(self._held, axis=-1)
        return pad_or_trim(held[:, start - self._first:stop - self._first])
