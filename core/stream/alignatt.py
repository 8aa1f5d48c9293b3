"""AlignAtt (Simul-Whisper, arXiv 2406.10052, as SimulStreaming runs it): after a single pass, commit the words
the decoder wrote while its cross-attention still looked at least `margin_frames` before the end of the audio
it has heard, instead of waiting for a second pass to agree (LocalAgreement-2).

- Each sampled token's row of the alignment heads' attention (the step that chose it, as word timings read
  it: core/decode/word_timing.py::alignment_weights) is averaged over the heads; its most attended encoder
  frame (20 ms) is where in the buffer the decoder was reading when it wrote the token.
- Reading stops at the first token whose frame lies within `margin_frames` of the end of the audio: that token
  and all after it stay tentative, and the next pass, which hears more audio, decodes them again.
- A word is committed when all its tokens came before the stop and the next word began before it, as
  SimulStreaming drops the last word of what it read (`simul_whisper/simul_whisper.py`, its tokens truncated
  after the last space). A word begun by the token that stopped was begun at the audio's edge, where the word
  before it may not have ended: committed at once, "prudently" became " prudent" and "Dashwood" " Dash would".
  So that word waits too. A stop at EOT begins no word: the last word waits for the final pass at the end of
  speech, or for more speech after it; EOT itself read clear of the margin ends the text there, and the last
  word is committed with the rest.

The committed words come again at the start of the next pass's hypothesis (the pass re-transcribes the
buffer) and are recognised there as LocalAgreement recognises them (`unseen`); only the commit rule differs.
A final pass (end of speech) commits all it hears, as before.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.decode.word_timing import Word, alignment_weights
from core.stream.agreement import LocalAgreement

if TYPE_CHECKING:
    from core.stream.one_pass import PassResult


def attended_frames(attention: np.ndarray, n_frames: int) -> np.ndarray:
    """The most attended encoder frame of each row of `attention` [rows, heads, 1500], within the
    `n_frames // 2` frames that hold audio (`n_frames`: mel frames of 10 ms)."""
    if attention is None or not len(attention):
        return np.zeros(0, np.int64)
    return alignment_weights(attention, n_frames).mean(axis=0).argmax(axis=-1)


def reading_stop(frames: np.ndarray, n_frames: int, margin_frames: int) -> int:
    """Index of the first row that looks into the last `margin_frames` encoder frames of the audio (the
    number of rows when none does): the rows before it are safe to emit."""
    late = np.nonzero(max(1, n_frames // 2) - np.asarray(frames) <= margin_frames)[0]
    return int(late[0]) if len(late) else len(frames)


@dataclass
class AlignAtt(LocalAgreement):
    margin_frames: int = 10

    def reading(self, result: PassResult) -> int:
        """How many of the pass's rows (its text tokens in order, then EOT when reached) came before the stop."""
        if result.attention is None:
            return 0
        return reading_stop(attended_frames(result.attention, result.n_frames), result.n_frames, self.margin_frames)

    def insert_pass(self, result: PassResult) -> list[Word]:
        new = self.unseen(result.words)
        rows = self.reading(result)
        safe = min(rows, len(result.tokens))
        # EOT read clear of the margin ends the text there: its last word is whole. (Held instead, a pass that
        # stops at an early EOT would hold it for ever: no sentence end is committed, so the buffer is never
        # cut after it and Whisper keeps ending there while the speech after it waits for a forced cut.)
        if len(result.sampled) > len(result.tokens) and rows == len(result.sampled):
            return self._commit(new, [])
        # Where each word's tokens begin and end among the pass's text tokens (words keep them in order).
        spans, at = {}, 0
        for w in result.words:
            spans[id(w)] = (at, at + len(w.tokens))
            at += len(w.tokens)
        n = 0
        while n < len(new) and spans[id(new[n])][1] <= safe:
            n += 1
        if n and not (n < len(new) and spans[id(new[n])][0] < safe):
            n -= 1      # no word was begun after it before the stop: the last one may still go on
        return self._commit(new[:n], new[n:])
