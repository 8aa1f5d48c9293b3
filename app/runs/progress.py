"""How far a run that decodes has come, in words for the status bar: "window 3 of 12 · step 41". Qt-free."""
from __future__ import annotations

import math

from app.runs.record import RunRecord
from core.decode.subtitles import WINDOW_S


def windows_total(run: RunRecord) -> int:
    """The 30 s windows of the run's audio (a timestamps run's seek may take more: never fewer than decoded)."""
    mels = getattr(run.clip, "mels", None)
    total = mels.shape[0] if mels is not None else math.ceil(run.duration_s / WINDOW_S) if run.duration_s else 0
    return max(total, len(run.transcript.windows))


def progress(run: RunRecord | None) -> str:
    """The window being decoded and its step, e.g. "window 3 of 12 · step 41"; "" once the run ended, before its
    first window, and for a live stream (the Live tab says how it goes)."""
    if run is None or run.live is not None or run.stop_reason is not None or not run.transcript.windows:
        return ""
    window = run.transcript.windows[-1]
    steps = [s for s in run.transcript.steps if s.window == window.window]
    where = f"window {len(run.transcript.windows)} of {windows_total(run)}"
    return f"{where} · step {steps[-1].step + 1}" if steps and not window.reason else where
