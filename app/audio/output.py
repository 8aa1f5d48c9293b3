"""The sound output shared by Play and click-to-play: a failure (no device, no PortAudio) is reported in full
once; later tries say so in one short note instead of the same dialog again."""
from __future__ import annotations

from typing import Callable

import numpy as np

from app.audio import player
from app.errors import Failure, failure_of

REPEATED = "No sound: {problem} (reported once; nothing else is tried until the app restarts)"


class Output:
    def __init__(self, sink: Callable[[np.ndarray], None] = player.play):
        self.sink = sink
        self.failure: Failure | None = None     # the first failure, once there was one

    def play(self, samples: np.ndarray, failed: Callable[[Failure], None], note: Callable[[str], None]) -> None:
        if self.failure is not None:
            note(REPEATED.format(problem=self.failure.problem))
            return
        try:
            self.sink(samples)
        except Exception as exc:      # the sink's own error, whatever the audio library raised
            self.failure = failure_of(exc)
            failed(self.failure)
