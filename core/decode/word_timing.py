"""Word timings from the alignment heads' cross-attention, by openai-whisper's method (whisper/timing.py):
z-score each head over the tokens, a median filter of width 7 along time, the mean of the heads, DTW
on its negative, and a word starts where the DTW path enters its first token.

The attention comes from the decode itself (DecodeOptions.attention, one row per sampled token: the
step whose logits chose it), not from a second forward pass as in whisper; the rows are the same
queries (the row choosing a token attends from the token before it), so the DTW input matches.
Pure NumPy: no numba, no torch, no scipy.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, field

import numpy as np

from core.model.tokenizer import WhisperTokenizer

TOKENS_PER_SECOND = 50          # audio positions a second: 1500 per 30 s window (20 ms each)
MEDFILT_WIDTH = 7
UNICODE_SPLIT_LANGUAGES = ("zh", "ja", "th", "lo", "my", "yue")
PREPEND_PUNCTUATIONS = "\"'“¿([{-"
APPEND_PUNCTUATIONS = "\"'.。,，!！?？:：”)]}、"
SENTENCE_END_MARKS = ".。!！?？"


@dataclass
class Word:
    word: str                   # with its leading space, as whisper gives it
    start: float                # seconds in the audio
    end: float
    probability: float          # mean probability of its tokens
    tokens: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"word": self.word, "start": self.start, "end": self.end, "probability": round(self.probability, 4)}


def median_filter(x: np.ndarray, width: int = MEDFILT_WIDTH) -> np.ndarray:
    """Along the last axis, reflect-padded (torch's F.pad "reflect", which is NumPy's "reflect")."""
    pad = width // 2
    if x.shape[-1] <= pad:
        return x
    padded = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)], mode="reflect")
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, width, axis=-1), axis=-1)


def dtw(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whisper's dtw_cpu (same tie-breaking), one anti-diagonal at a time: (text_indices, time_indices)."""
    n, m = x.shape
    cost = np.full((n + 1, m + 1), np.inf)
    trace = -np.ones((n + 1, m + 1), np.int8)
    cost[0, 0] = 0
    for d in range(2, n + m + 1):
        i = np.arange(max(1, d - m), min(n, d - 1) + 1)
        j = d - i
        c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
        t = np.where((c0 < c1) & (c0 < c2), 0, np.where((c1 < c0) & (c1 < c2), 1, 2))
        cost[i, j] = x[i - 1, j - 1] + np.choose(t, [c0, c1, c2])
        trace[i, j] = t
    trace[0, :], trace[:, 0] = 2, 1
    i, j, path = n, m, []
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        step = trace[i, j]
        i, j = (i - 1, j - 1) if step == 0 else (i - 1, j) if step == 1 else (i, j - 1)
    return np.array(path[::-1]).T


def _decode(tokenizer: WhisperTokenizer, tokens: list[int]) -> str:
    return b"".join(tokenizer.token_bytes(t) for t in tokens).decode("utf-8", errors="replace")


def split_tokens_on_unicode(tokenizer: WhisperTokenizer, tokens: list[int]) -> tuple[list[str], list[list[int]]]:
    full, words, groups, current, offset = _decode(tokenizer, tokens), [], [], [], 0
    for token in tokens:
        current.append(token)
        decoded = _decode(tokenizer, current)
        if "\ufffd" not in decoded or full[offset + decoded.index("\ufffd")] == "\ufffd":
            words.append(decoded)
            groups.append(current)
            current, offset = [], offset + len(decoded)
    return words, groups


def split_to_word_tokens(tokenizer: WhisperTokenizer, tokens: list[int],
                         language: str = "en") -> tuple[list[str], list[list[int]]]:
    """Whisper's split: per character group for languages without spaces, else at spaces and punctuation."""
    subwords, groups = split_tokens_on_unicode(tokenizer, tokens)
    if language in UNICODE_SPLIT_LANGUAGES:
        return subwords, groups
    words, word_tokens = [], []
    for sub, toks in zip(subwords, groups):
        if toks[0] >= tokenizer.eot or sub.startswith(" ") or sub.strip() in string.punctuation or not words:
            words.append(sub)
            word_tokens.append(list(toks))
        else:
            words[-1] += sub
            word_tokens[-1].extend(toks)
    return words, word_tokens


def _merge_punctuations(words: list[Word]) -> None:
    """whisper's merge_punctuations: leading marks join the next word, trailing ones the previous."""
    i, j = len(words) - 2, len(words) - 1
    while i >= 0:
        prev, nxt = words[i], words[j]
        if prev.word.startswith(" ") and prev.word.strip() in PREPEND_PUNCTUATIONS:
            nxt.word, nxt.tokens = prev.word + nxt.word, prev.tokens + nxt.tokens
            prev.word, prev.tokens = "", []
        else:
            j = i
        i -= 1
    i, j = 0, 1
    while j < len(words):
        prev, nxt = words[i], words[j]
        if not prev.word.endswith(" ") and nxt.word in APPEND_PUNCTUATIONS:
            prev.word, prev.tokens = prev.word + nxt.word, prev.tokens + nxt.tokens
            nxt.word, nxt.tokens = "", []
        else:
            i = j
        j += 1


def _truncate_sentence_ends(words: list[Word]) -> None:
    """whisper's hack: a word at a sentence boundary is at most twice the median word duration."""
    durations = np.array([w.end - w.start for w in words])
    durations = durations[durations.nonzero()]
    if not len(durations):
        return
    max_duration = 2 * min(0.7, float(np.median(durations)))
    for i in range(1, len(words)):
        if words[i].end - words[i].start > max_duration:
            if words[i].word in SENTENCE_END_MARKS:
                words[i].end = words[i].start + max_duration
            elif words[i - 1].word in SENTENCE_END_MARKS:
                words[i].start = words[i].end - max_duration


def alignment_weights(attention: np.ndarray, n_frames: int, medfilt_width: int = MEDFILT_WIDTH) -> np.ndarray:
    """whisper's alignment matrix: `attention` [rows, heads, 1500] (one row per token) cut to the audio's
    `n_frames // 2` positions, each head z-scored over the rows and median-filtered along time:
    [heads, rows, frames]. Its mean over the heads is what DTW (word timings) and AlignAtt (core/stream) read."""
    w = np.asarray(attention, np.float64).reshape(len(attention), -1, np.shape(attention)[-1])
    w = w[:, :, :max(1, n_frames // 2)]
    # whisper takes the softmax over the audio frames only: the same as renormalising the weights.
    w = (w / np.maximum(w.sum(-1, keepdims=True), 1e-30)).transpose(1, 0, 2)      # [heads, rows, frames]
    std, mean = w.std(axis=-2, keepdims=True), w.mean(axis=-2, keepdims=True)
    return median_filter((w - mean) / np.where(std > 0, std, 1.0), medfilt_width)


def word_timings(attention: np.ndarray, tokens: list[int], logprobs: list[float], tokenizer: WhisperTokenizer,
                 offset_s: float = 0.0, n_frames: int = 3000, language: str = "en",
                 medfilt_width: int = MEDFILT_WIDTH) -> list[Word]:
    """Words of one window. `tokens`: its sampled tokens in order (EOT last when the window reached it;
    timestamp tokens are skipped), `attention` [len(tokens), heads, 1500] and `logprobs` [len(tokens)]
    one row per token; `n_frames`: the window's mel frames (10 ms) that hold audio."""
    eot = tokenizer.eot
    text_rows = [i for i, t in enumerate(tokens) if t < eot]
    if not text_rows:
        return []
    text_tokens = [tokens[i] for i in text_rows]
    ended = tokens[-1] == eot
    rows = text_rows + ([len(tokens) - 1] if ended else [])
    w = alignment_weights(np.asarray(attention)[rows], n_frames, medfilt_width)
    text_indices, time_indices = dtw(-w.mean(axis=0))

    words, word_tokens = split_to_word_tokens(tokenizer, text_tokens + [eot], language)
    if len(word_tokens) <= 1:
        return []
    boundaries = np.pad(np.cumsum([len(t) for t in word_tokens[:-1]]), (1, 0))
    jumps = np.pad(np.diff(text_indices), (1, 0), constant_values=1).astype(bool)
    jump_times = time_indices[jumps] / TOKENS_PER_SECOND
    if not ended:   # no row for EOT: the last word ends where the path leaves the last token
        jump_times = np.append(jump_times, (time_indices[-1] + 1) / TOKENS_PER_SECOND)
    probs = np.exp(np.asarray(logprobs, np.float64)[text_rows])
    out = [Word(word, float(jump_times[a]), float(jump_times[b]), float(np.mean(probs[a:b])), toks)
           for word, toks, a, b in zip(words, word_tokens, boundaries[:-1], boundaries[1:])]
    _truncate_sentence_ends(out)
    _merge_punctuations(out)
    end_s = offset_s + n_frames / 100
    for word in out:
        word.start = round(min(max(offset_s + word.start, offset_s), end_s), 2)
        word.end = round(min(max(offset_s + word.end, word.start), end_s), 2)
    return [w for w in out if w.word]


def window_words(token_events: list, done, tokenizer: WhisperTokenizer, n_frames: int | None = None) -> list[Word]:
    """The words of one decoded window from its TokenEvents (with attention) and its DoneEvent.
    `n_frames` defaults to the window's seek_frames (its audio frames, without timestamps)."""
    events = [e for e in token_events if e.attention is not None]
    if not events:
        return []
    return word_timings(np.stack([np.asarray(e.attention, np.float32) for e in events]),
                        [e.token for e in events], [e.logprob for e in events], tokenizer, done.offset_s,
                        n_frames or done.seek_frames, done.language or "en")
