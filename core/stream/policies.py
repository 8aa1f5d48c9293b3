"""The streaming policies, one row each: the rule that decides which words of a pass are committed, and the
pass interval it is measured best with. `whisperkv stream --policy`, its help and the JSON's `policy`, and
any selector in the studio are generated from this table (`POLICIES`, `policy_help`).

Both rules run inside the same StreamPolicy (core/stream/policy.py): the Silero VAD gate, the prompt of
committed text, buffer trimming, skip-ahead and the final commit at a pause are shared.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.errors import WhisperKVError
from core.stream.agreement import LocalAgreement
from core.stream.alignatt import AlignAtt


@dataclass(frozen=True)
class PolicyKind:
    name: str
    summary: str                                   # one line: help texts, a combo's tooltip
    rule: Callable[..., LocalAgreement]            # (core.stream.policy.StreamConfig) -> a fresh commit rule
    min_chunk_s: float                             # its default new audio between two passes


# AlignAtt's defaults, from bench/stream_tune.py on espeak-ng speech (never the clips docs/benchmarks.md reports on;
# there, "Streaming policies side by side"): margins of 5, 10 and 20 frames committed the same words (2.7 % of them
# disagreeing with offline; WER 0.073, 0.073, 0.086; lag without compute 0.39, 0.40, 0.46 s), so 10 frames: as
# accurate as 5, twice as far from the end. Its pass interval is LocalAgreement's 1 s: a pass costs ~0.75 s on the
# 2-core PC, so 0.5 s would run passes back to back for ~0.1 s less median lag at ~1.35x the compute.
POLICIES: dict[str, PolicyKind] = {p.name: p for p in (
    PolicyKind("alignatt", "commit after one pass the words whose cross-attention lies before the last "
               "--margin frames of the audio (SimulStreaming's AlignAtt)",
               lambda config: AlignAtt(margin_frames=config.margin_frames), 1.0),
    PolicyKind("local-agreement", "commit the words two consecutive passes agree on (whisper_streaming's "
               "LocalAgreement-2)", lambda config: LocalAgreement(), 1.0),
)}
# The default stays LocalAgreement-2. Side by side on a quiet 2-core PC (docs/benchmarks.md, "Streaming policies side
# by side") AlignAtt committed at 0.65-0.75x its median lag on all three recordings, but did not win without losing
# WER: 0.007 and 0.014 above LocalAgreement's on the two English recordings, 0.07 below on the two speakers, 38
# word errors in all against LocalAgreement's 36 (of 740 reference words).
DEFAULT_POLICY = "local-agreement"
DEFAULT_MARGIN_FRAMES = 10


def policy_kind(name: str) -> PolicyKind:
    try:
        return POLICIES[name]
    except KeyError:
        raise WhisperKVError(f"unknown streaming policy {name!r}",
                             f"choose one of {', '.join(POLICIES)}") from None


def policy_help() -> str:
    """`--policy`'s help: every policy with its summary and default pass interval, the default first."""
    rows = [f"{p.name}{' (default)' if p.name == DEFAULT_POLICY else ''}: {p.summary}, a pass every "
            f"{p.min_chunk_s:g} s of new audio" for p in POLICIES.values()]
    return "; ".join(rows)
