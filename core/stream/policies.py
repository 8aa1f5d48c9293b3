"""The streaming policies, one row each: the rule that decides which words of a pass are committed, and the
pass interval it is measured best with; and their parameters, one row each (`PARAMS`). `whisperkv stream
--policy` and a flag per parameter, their help, the JSON's `policy` and parameters (`policy_summary`), and the
studio's Live tab (its policy selector and a control per parameter) are generated from these two tables.

Both rules run inside the same StreamPolicy (core/stream/policy.py): the Silero VAD gate, the prompt of
committed text, buffer trimming, skip-ahead and the final commit at a pause are shared.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.decode.window_choice import WINDOW_PARAMS
from core.errors import WhisperKVError
from core.stream.agreement import LocalAgreement
from core.stream.alignatt import AlignAtt


@dataclass(frozen=True)
class PolicyKind:
    name: str
    summary: str                                   # one line: help texts, a combo's tooltip
    rule: Callable[..., LocalAgreement]            # (core.stream.policy.StreamConfig) -> a fresh commit rule
    min_chunk_s: float                             # its default new audio between two passes

    @property
    def defaults(self) -> dict:
        """Its own value of each parameter whose row has no default."""
        return {"min_chunk_s": self.min_chunk_s}


@dataclass(frozen=True)
class PolicyParam:
    """A parameter of the policies: a key of StreamConfig.params and of the JSON document, a CLI flag, a Live tab
    control. A new parameter is one row here plus the code that reads `config.params[name]`."""
    name: str
    flag: str                      # `whisperkv stream`'s flag
    kind: type                     # int or float
    default: float | None          # None: each policy's own (PolicyKind.defaults)
    low: float                     # the least value
    low_allowed: bool              # whether `low` itself is allowed
    unit: str                      # "s", "frames": the flag's metavar, its error, the control's suffix
    help: str
    policies: tuple[str, ...] = ()   # the policies that read it; empty: every one

    def applies_to(self, policy: str) -> bool:
        return not self.policies or policy in self.policies

    def check(self, value) -> None:
        if value < self.low or (value == self.low and not self.low_allowed):
            bound = "at least" if self.low_allowed else "above"
            raise WhisperKVError(f"{self.flag} must be {bound} {self.low:g} {self.unit}".rstrip(),
                                 f"e.g. `whisperkv stream clip.wav --realtime --policy alignatt {self.flag} "
                                 f"{self.kind(self.default if self.default is not None else self.low + 1):g}`")


# AlignAtt's defaults, from bench/stream_tune.py on espeak-ng speech (never the clips docs/benchmarks.md reports on;
# there, "Encoder windows"): in three voices, margins of 4, 7, 10, 15 and 20 frames got 54, 45, 36, 39 and 40 of 451
# words unlike offline, so 10 frames. Its pass interval is LocalAgreement's 1 s: a pass costs ~0.75 s on the
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
# A stream's passes are sized with a 20 s floor. Chosen on bench/stream_tune.py's espeak-ng speech in nine voices (no
# reported clip), AlignAtt's defaults: against offline a 20 s floor got 162 of 1364 words wrong, 30 s windows 159, a
# 10 s floor 175, at 0.66x and 0.44x the 30 s windows' compute (docs/benchmarks.md, "Encoder windows").
STREAM_WINDOWS = {"window_floor_s": 20.0}

PARAMS: dict[str, PolicyParam] = {p.name: p for p in (
    PolicyParam("min_chunk_s", "--min-chunk", float, None, 0.0, False, "s",
                "new audio between passes (default: the policy's own, "
                + ", ".join(f"{p.name} {p.min_chunk_s:g} s" for p in POLICIES.values()) + ")"),
    PolicyParam("margin_frames", "--margin", int, DEFAULT_MARGIN_FRAMES, 0, True, "frames",
                "alignatt: a token is committed only while its attention lies more than FRAMES encoder frames "
                f"(20 ms each) before the end of the audio heard (default {DEFAULT_MARGIN_FRAMES})", ("alignatt",)),
    # Each pass encodes the smallest window its buffer fits (core/decode/window_choice.py, the same rows as
    # `transcribe --window auto`), with the stream's own defaults (STREAM_WINDOWS).
    *(PolicyParam(w.name, w.flag, float, STREAM_WINDOWS.get(w.name, w.default), 0.0, True, "s",
                  f"{w.help} (default {STREAM_WINDOWS.get(w.name, w.default):g} s)")
      for w in WINDOW_PARAMS),
)}


def policy_kind(name: str) -> PolicyKind:
    try:
        return POLICIES[name]
    except KeyError:
        raise WhisperKVError(f"unknown streaming policy {name!r}",
                             f"choose one of {', '.join(POLICIES)}") from None


def resolve_params(policy: str, given: dict) -> dict:
    """Every parameter's value for `policy`: the given one (checked), else its row's default, else the policy's own."""
    unknown = set(given) - set(PARAMS)
    if unknown:
        raise WhisperKVError(f"unknown streaming parameter {', '.join(sorted(unknown))}",
                             f"use {', '.join(PARAMS)}")
    kind, out = policy_kind(policy), {}
    for p in PARAMS.values():
        value = given.get(p.name)
        if value is None:
            value = p.default if p.default is not None else kind.defaults[p.name]
        else:
            p.check(value)
        out[p.name] = p.kind(value)
    return out


def policy_summary(config) -> dict:
    """The JSON document's fields on the policy that ran and the parameters it reads."""
    return {"policy": config.policy} | {p.name: config.params[p.name] for p in PARAMS.values()
                                        if p.applies_to(config.policy)}


def policy_help() -> str:
    """`--policy`'s help: every policy with its summary and default pass interval, the default first."""
    rows = [f"{p.name}{' (default)' if p.name == DEFAULT_POLICY else ''}: {p.summary}, a pass every "
            f"{p.min_chunk_s:g} s of new audio" for p in POLICIES.values()]
    return "; ".join(rows)
