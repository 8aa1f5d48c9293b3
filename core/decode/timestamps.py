"""Whisper's timestamp mode: the logit rules that keep timestamp tokens well formed, and
turning a window's tokens into timed segments plus how far to seek for the next window."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.model.tokenizer import SpecialTokens, WhisperTokenizer

TIME_PRECISION = 0.02       # seconds per timestamp token
FRAMES_PER_TIMESTAMP = 2    # mel frames (10 ms each) per timestamp token
MAX_INITIAL_TIMESTAMP = 1.0  # seconds: the first timestamp may not start later than this


@dataclass
class Segment:
    start: float
    end: float
    text: str
    tokens: list[int]


def apply_timestamp_rules(logits: np.ndarray, sampled: list[int], sp: SpecialTokens) -> np.ndarray:
    """In place on a [V] float array whose suppressed entries are already -inf."""
    tb = sp.timestamp_begin
    last_ts = len(sampled) >= 1 and sampled[-1] >= tb
    penultimate_ts = len(sampled) < 2 or sampled[-2] >= tb
    if last_ts:
        if penultimate_ts:
            logits[tb:] = -np.inf      # a pair closed: text must follow
        else:
            logits[:sp.eot] = -np.inf  # an open timestamp: another timestamp or EOT
    stamps = [t for t in sampled if t >= tb]
    if stamps:
        last = stamps[-1] if last_ts and not penultimate_ts else stamps[-1] + 1
        logits[tb:last] = -np.inf      # time never goes backwards
    if not sampled:
        logits[:tb] = -np.inf
        logits[tb + round(MAX_INITIAL_TIMESTAMP / TIME_PRECISION) + 1:] = -np.inf
    # Timestamps together outweigh any single text token: whisper compares their log-softmax values, and the
    # normaliser they share cancels. Slices and -inf arithmetic, no mask over the vocabulary: this runs every step.
    stamps_max = logits[tb:].max()
    if stamps_max > -np.inf:
        lse = stamps_max + np.log(np.exp(logits[tb:] - stamps_max, dtype=np.float64).sum())
        if lse > logits[:tb].max():
            logits[:tb] = -np.inf
    return logits


def split_segments(tokens: list[int], tokenizer: WhisperTokenizer, offset_s: float,
                   segment_frames: int) -> tuple[list[Segment], int]:
    """Segments (absolute seconds) of one window's sampled tokens, and the frames to seek forward."""
    tb = tokenizer.special.timestamp_begin
    # Whisper may stamp past the end of the audio (a 1.4 s clip ending at <|2.00|>): clamp to it.
    t_of = lambda tok: min((tok - tb) * TIME_PRECISION, segment_frames / 100.0)  # noqa: E731
    slices = _segment_ends(tokens, tb)
    segments: list[Segment] = []
    if slices:
        single_ending = slices[-1] == len(tokens)
        last = 0
        for cut in slices:
            part = tokens[last:cut]
            text = [t for t in part if t < tokenizer.special.eot]
            if text:
                segments.append(Segment(offset_s + t_of(part[0]), offset_s + t_of(part[-1]),
                                        tokenizer.decode(text), part))
            last = cut
        seek = segment_frames if single_ending else (tokens[last - 1] - tb) * FRAMES_PER_TIMESTAMP
    else:
        stamps = [t for t in tokens if t >= tb]
        duration = segment_frames / 100.0
        if stamps and stamps[-1] != tb:
            duration = t_of(stamps[-1])
        text = [t for t in tokens if t < tokenizer.special.eot]
        if text:
            segments.append(Segment(offset_s, offset_s + duration, tokenizer.decode(text), tokens))
        seek = segment_frames
    return segments, max(1, seek)


def _segment_ends(tokens: list[int], tb: int) -> list[int]:
    """Where whisper cuts a window's tokens into complete segments: after each pair of consecutive timestamps,
    and at the end when the window ends on a single timestamp. Empty when no two timestamps are consecutive."""
    is_ts = [t >= tb for t in tokens]
    ends = [i + 1 for i in range(len(tokens) - 1) if is_ts[i] and is_ts[i + 1]]
    return ends + [len(tokens)] if ends and is_ts[-2:] == [False, True] else ends


def kept_length(tokens: list[int], tokenizer: WhisperTokenizer) -> int:
    """How many of a window's sampled tokens its complete segments hold (as `split_segments` cuts them): the
    rest, an unfinished segment after the last timestamp pair, is decoded again by the window that starts there."""
    ends = _segment_ends(tokens, tokenizer.special.timestamp_begin)
    return ends[-1] if ends else len(tokens)
