"""A run's words and the audio span of any step, from the attention the run recorded: words by DTW
(core/decode/word_timing.py) once a window is done, computed once per window and kept on the record.

Qt-free: the transcript tint, click-to-play and the tests share it."""
from __future__ import annotations

from app.runs import token_names
from app.runs.record import RunRecord
from core.decode.attention_focus import focus_seconds
from core.decode.events import DoneEvent, TokenEvent
from core.decode.word_timing import Word, window_words

AROUND_S = 0.25   # a step without a word (EOT, a timestamp, a window still decoding): this much either side of its focus


def _done(run: RunRecord, window: int) -> DoneEvent | None:
    return next((e for e in reversed(run.events) if isinstance(e, DoneEvent) and e.window == window), None)


def window_word_rows(run: RunRecord, window: int) -> list[tuple[Word, list[int]]]:
    """The words of a finished window, each with the run-wide rows (TokenRow.x) of its tokens; [] while the
    window decodes, when it has no attention, or without a tokenizer."""
    cache = run.derived.setdefault("words", {})
    if window in cache:
        return cache[window]
    done = _done(run, window)
    if done is None:
        return []
    tokenizer = token_names.tokenizer()
    rows = [r for r in run.rows if r.event.window == window and r.event.attention is not None]
    words = window_words([r.event for r in rows], done, tokenizer) if rows and tokenizer is not None else []
    # The words' tokens are the window's text tokens in order (timestamps and EOT have none).
    text_rows = [r.x for r in rows if r.event.token < tokenizer.eot] if words else []
    starts = [0]
    for w in words:
        starts.append(starts[-1] + len(w.tokens))
    cache[window] = [(w, text_rows[a:b]) for w, a, b in zip(words, starts, starts[1:])]
    return cache[window]


def word_rows(run: RunRecord) -> list[tuple[Word, list[int]]]:
    """Every finished window's words in order."""
    windows = sorted({r.event.window for r in run.rows})
    return [pair for w in windows for pair in window_word_rows(run, w)]


def word_of_step(run: RunRecord, x: int) -> Word | None:
    if not 0 <= x < len(run.rows):
        return None
    return next((w for w, xs in window_word_rows(run, run.rows[x].event.window) if x in xs), None)


def step_span(run: RunRecord, x: int) -> tuple[float, float] | None:
    """Seconds of audio that belong to step `x`: its word's span, else around where the step looked; None
    without attention."""
    word = word_of_step(run, x)
    if word is not None:
        return word.start, max(word.end, word.start + 0.02)
    if not 0 <= x < len(run.rows) or run.rows[x].event.attention is None:
        return None
    ev: TokenEvent = run.rows[x].event
    at = focus_seconds(ev.attention, window_offset(run, ev.window), duration_s=run.duration_s)
    return max(0.0, at - AROUND_S), at + AROUND_S


def window_offset(run: RunRecord, window: int) -> float:
    """Where `window` starts in the audio (its encoded event says)."""
    return next((w.offset_s for w in run.transcript.windows if w.window == window), 0.0)
