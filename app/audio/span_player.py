"""Click-to-play: the audio span of a clicked word or token, from the run's own clip. The sink (sounddevice's
non-blocking play by default) is injectable, so tests without a sound card check the samples requested."""
from __future__ import annotations

from typing import Callable

import numpy as np
from PySide6.QtCore import QObject, Signal

from app.audio import player
from app.audio.output import Output
from app.runs.record import RunRecord
from app.runs.words import step_span

NO_SPAN = "No audio span for step {x}: the run has no attention there (tick Attention under Run)"
PAST_END = "Nothing to play: the span starts at {start:.2f} s, past the end of the audio"
NO_AUDIO = "The audio of run #{id} is not loaded (a run read back from a session file)"


class SpanPlayer(QObject):
    spanShown = Signal(float, float)     # seconds: where the step's audio is
    note = Signal(str)                   # why nothing plays
    failed = Signal(object)              # Failure: no audio output

    def __init__(self, sink: Callable[[np.ndarray], None] = player.play, parent=None, output: Output | None = None):
        super().__init__(parent)
        self.output = output or Output(sink)

    def play_step(self, run: RunRecord | None, x: int) -> tuple[float, float] | None:
        """Show and play step `x`'s span of `run`; the span, or None when it has none."""
        if run is None:
            return None
        span = step_span(run, x)
        if span is None:
            self.note.emit(NO_SPAN.format(x=x))
            return None
        self.spanShown.emit(*span)
        if run.clip is None:
            self.note.emit(NO_AUDIO.format(id=run.id))
            return span
        a, b = (round(t * player.SAMPLE_RATE) for t in span)
        if b <= a or a >= len(run.clip.samples):
            self.note.emit(PAST_END.format(start=span[0]))
            return span
        self.output.play(run.clip.samples[a:b], self.failed.emit, self.note.emit)
        return span
