"""Figures of a finished stream: commit lag, first visible and end of file (core/stream/latency.py), compute per
second of audio, and its JSON document."""
from __future__ import annotations

import numpy as np

from core.stream.events import Committed, PassRecord, Skipped, StreamEvent, Trimmed
from core.stream.latency import latency_figures


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"median": None, "p90": None, "p95": None, "max": None, "n": 0}
    a = np.asarray(values, np.float64)
    return {"median": round(float(np.median(a)), 3), "p90": round(float(np.percentile(a, 90)), 3),
            "p95": round(float(np.percentile(a, 95)), 3), "max": round(float(a.max()), 3), "n": len(values)}


def word_lags(commits: list[Committed]) -> list[float]:
    """emitted_s - end of each committed word: the earlier words of a commit waited longer than its last."""
    return [c.emitted_s - w["end"] for c in commits for w in c.words]


def stream_summary(events: list[StreamEvent], audio_s: float, speech_start_s: float | None = None) -> dict:
    commits = [e for e in events if isinstance(e, Committed)]
    passes = [e for e in events if isinstance(e, PassRecord)]
    compute_s = sum(p.encoder_ms + p.decode_ms for p in passes) / 1e3
    wall_s = sum(p.wall_ms for p in passes) / 1e3
    return {
        "text": "".join(c.text for c in commits).strip(),
        "commits": [{"text": c.text, "start_s": c.start_s, "end_s": c.end_s, "emitted_s": c.emitted_s,
                     "words": c.words} for c in commits],
        "passes": [p.summary() for p in passes],
        "skipped": [{"at_s": e.at_s, "behind_s": e.behind_s, "last_pass_ms": e.last_pass_ms}
                    for e in events if isinstance(e, Skipped)],
        "trimmed": [{"cut_s": e.cut_s, "reason": e.reason, "emitted_s": e.emitted_s}
                    for e in events if isinstance(e, Trimmed)],
        "audio_s": round(audio_s, 3),
        "lag_s": percentiles([c.lag_s for c in commits]),
        "word_lag_s": percentiles(word_lags(commits)),
        **latency_figures(events, speech_start_s),
        "compute_s": round(compute_s, 3),
        "compute_per_audio_s": round(compute_s / audio_s, 3) if audio_s else None,
        "pass_wall_per_audio_s": round(wall_s / audio_s, 3) if audio_s else None,
    }
