"""Where the decoder looked when a run stopped at EOT, judged against the energy of the run's own audio
(core/decode/attention_focus.py). Qt-free: the stop banner and the QA tab read it."""
from __future__ import annotations

import numpy as np

from app.runs.record import RunRecord
from core.decode import attention_focus
from core.decode.attention_focus import Focus, frame_energy


def run_energy(run: RunRecord) -> np.ndarray | None:
    """Per 10 ms frame of the run's audio, from the mel it sent; None when the audio is not at hand (a run
    read back from a session file)."""
    clip = run.clip
    if clip is None:
        return None
    if "energy" not in run.derived:
        run.derived["energy"] = frame_energy(clip.mels, clip.n_frames)
    return run.derived["energy"]


def eot_focus(run: RunRecord) -> Focus | None:
    return attention_focus.eot_focus(run.transcript.windows, run.transcript.steps, run_energy(run), run.duration_s)
