"""A suite's speed floor and its NPU requirement, held against each decoded clip (and a studio device profile's,
the stricter of the two: device_floor).

A clip (or a suite's [defaults]) may set `min_tokens_per_s`, a floor on the decoder's speed (its steps over the
runner's decode time), and `require_npu`, which fails a clip whose graphs ran, wholly or in part, on the CPU.
WhisperKit's regression tests fail a run below a speed floor for the same reason: a silent fallback to the CPU
still gives the right text. Where the graphs ran comes from the device's hello (core/model/placement.py).
"""
from __future__ import annotations

from dataclasses import replace

from core.model.placement import RanOn
from core.qa.suite import Clip

UNSAID = "the device did not say where its graphs ran, and the NPU was required"


def tokens_per_s(r) -> float | None:
    """Decoder steps per second of a ClipResult's decode time (None when nothing was decoded)."""
    return round(r.steps * 1e3 / r.decode_ms, 2) if r.steps and r.decode_ms else None


def device_floor(clip: Clip, min_tokens_per_s: float = 0.0, require_npu: bool = False) -> Clip:
    """The clip as held on a device whose profile sets its own floor (0: none) and NPU requirement: the stricter
    floor of the two, and the NPU required if either requires it."""
    floors = [f for f in (clip.min_tokens_per_s, min_tokens_per_s) if f]
    return replace(clip, min_tokens_per_s=max(floors) if floors else None, require_npu=clip.require_npu or require_npu)


def hold_to_floor(clip: Clip, r, ran_on: RanOn | None):
    """Record where the clip ran and its speed on its ClipResult `r` (core/qa/run.py), and fail it, naming why,
    below the floor or off the NPU."""
    r.ran_on = ran_on.short if ran_on else ""
    r.tokens_per_s = tokens_per_s(r)
    why = []
    floor = clip.min_tokens_per_s
    if floor is not None and (r.tokens_per_s is None or r.tokens_per_s < floor):
        why.append(f"{r.tokens_per_s:.1f} tokens/s < floor {floor:g}" if r.tokens_per_s is not None
                   else f"no decoder time to hold to the floor of {floor:g} tokens/s")
    if clip.require_npu:
        shortfall = ran_on.npu_shortfall() if ran_on else UNSAID
        if shortfall:
            why.append(shortfall)
    r.failures += why
    r.passed = r.passed and not why
    return r
