"""Greedy decoding over the MTK-form graphs, one telemetry event per step.

The cached path feeds one token per step graph call and keeps K/V in a `KVCache`; the
uncached path reruns the full causal decoder over every token at every step. Both apply
the same logit rules, so their tokens must be identical.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from core.decode.events import DoneEvent, EncodedEvent, Event, TokenEvent
from core.decode.timestamps import apply_timestamp_rules, split_segments
from core.model.encoder_cache import EncoderCache, mel_key
from core.model.kv_cache import KVCache
from core.model.mel import N_FRAMES, pad_or_trim
from core.model.tokenizer import Utf8Assembler, WhisperTokenizer
from core.model.whisper import causal_mask, embed


@dataclass
class DecodeOptions:
    language: str | None = None   # None or "auto": detect from the language-token probabilities
    task: str = "transcribe"      # or "translate"
    cache: bool = True
    max_tokens: int = 224         # sampled tokens per window (Whisper's default sample_len)
    top_k: int = 5
    timestamps: bool = False
    suppress_eot: bool = False    # diagnostics: forbid EOT to provoke a run into the cache ceiling

    def __post_init__(self):
        if self.language in ("", "auto"):
            self.language = None
        if self.task not in ("transcribe", "translate"):
            raise ValueError(f"task must be transcribe or translate, not {self.task!r}")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")


def log_softmax(x: np.ndarray) -> np.ndarray:
    """float32 over the 51865 logits (float64 costs ~1 ms a step); the sum accumulates in float64."""
    x = np.asarray(x, dtype=np.float32)
    m = x.max()
    return x - (m + np.float32(np.log(np.exp(x - m).sum(dtype=np.float64))))


FRAMES_PER_SECOND = 100


class LogitRules:
    """Whisper's standard rules: no blank or EOT first, no non-speech symbols, no special tokens."""

    def __init__(self, tokenizer: WhisperTokenizer, options: DecodeOptions, n_vocab: int):
        sp = tokenizer.special
        suppress = np.zeros(n_vocab, bool)
        suppress[tokenizer.non_speech_tokens] = True
        suppress[sp.sot:] = True  # every special token but EOT (timestamps too, unless asked for)
        if options.timestamps:
            suppress[sp.timestamp_begin:] = False
        if options.suppress_eot:
            suppress[sp.eot] = True
        self.suppress = suppress
        self.blank = tokenizer.encode(" ") + [sp.eot]
        self.special = tokenizer.special
        self.timestamps = options.timestamps

    def apply(self, logits: np.ndarray, sampled: list[int]) -> np.ndarray:
        logits = logits.astype(np.float32, copy=True)
        logits[self.suppress] = -np.inf
        if not sampled:
            logits[self.blank] = -np.inf
        if self.timestamps:
            apply_timestamp_rules(logits, sampled, self.special)
        return logits


class _CachedStepper:
    """Advances the decoder one token at a time through the step graph and the KV cache."""

    def __init__(self, backend, cross_k, cross_v):
        d = backend.dims
        self.backend, self.cross_k, self.cross_v = backend, cross_k, cross_v
        self.cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)

    @property
    def length(self) -> int:
        return self.cache.cache_len

    @property
    def full(self) -> bool:
        return self.cache.full

    @property
    def bytes_used(self) -> int:
        return self.cache.bytes_used

    def advance(self, token: int) -> np.ndarray:
        x = embed(self.backend, [token], self.cache.cache_len)
        logits, new_k, new_v = self.backend.step(x, self.cache.k, self.cache.v, self.cross_k, self.cross_v,
                                                 self.cache.mask())
        self.cache.write(new_k, new_v)
        return logits.reshape(-1)


class _UncachedStepper:
    """Reference mode: the full causal decoder over all tokens so far, at every step."""

    def __init__(self, backend, cross_k, cross_v):
        self.backend, self.cross_k, self.cross_v = backend, cross_k, cross_v
        self.max_len = backend.dims.n_text_ctx
        self.mask = causal_mask(self.max_len)
        self.tokens: list[int] = []

    @property
    def length(self) -> int:
        return len(self.tokens)

    @property
    def full(self) -> bool:
        return len(self.tokens) >= self.max_len

    bytes_used = 0

    def advance(self, token: int) -> np.ndarray:
        self.tokens.append(token)
        n = len(self.tokens)
        x = embed(self.backend, self.tokens, 0)
        return self.backend.full(x, self.cross_k, self.cross_v, self.mask[None, None, :n, :n]).reshape(-1)


def detect_language(tokenizer: WhisperTokenizer, sot_logits: np.ndarray) -> tuple[str, dict[str, float]]:
    ids = np.array(list(tokenizer.languages.values()))
    lp = log_softmax(sot_logits[ids])
    order = np.argsort(-lp)
    codes = list(tokenizer.languages)
    probs = {codes[i]: float(np.exp(lp[i])) for i in order[:5]}
    return codes[order[0]], probs


def decode_window(backend, tokenizer: WhisperTokenizer, mel: np.ndarray, options: DecodeOptions,
                  window: int = 0, language: str | None = None,
                  should_cancel: Callable[[], bool] = lambda: False,
                  encoder_cache: EncoderCache | None = None, offset_s: float = 0.0,
                  segment_frames: int = N_FRAMES) -> Iterator[Event]:
    """Encode one [80, 3000] window (or take its cross K/V from `encoder_cache`) and decode it greedily.
    `offset_s` is where the window starts in the audio; `segment_frames` how many of its frames hold audio."""
    t0 = time.perf_counter()
    key = mel_key(mel) if encoder_cache is not None else ""
    encoded = encoder_cache.get(key) if encoder_cache is not None else None
    cross_k, cross_v = encoded if encoded is not None else backend.encode(mel.reshape(1, *mel.shape[-2:]))
    if encoder_cache is not None and encoded is None:
        encoder_cache.put(key, (cross_k, cross_v))
    enc_ms = (time.perf_counter() - t0) * 1e3
    t_step = time.perf_counter()
    stepper = (_CachedStepper if options.cache else _UncachedStepper)(backend, cross_k, cross_v)
    sp = tokenizer.special
    probs: dict[str, float] = {}
    sot_logits = None
    if language is None:
        sot_logits = stepper.advance(sp.sot)
        language, probs = detect_language(tokenizer, sot_logits)
    yield EncodedEvent(window=window, ms=enc_ms, language=language, language_probs=probs,
                       cache_hit=encoded is not None, offset_s=offset_s)

    prefix = tokenizer.sot_sequence(language, options.task, options.timestamps)
    logits = None
    for tok in prefix[stepper.length:]:
        logits = stepper.advance(tok)
        if tok == sp.sot:
            sot_logits = logits
    no_speech_prob = float(np.exp(log_softmax(sot_logits)[sp.no_speech]))
    sum_logprob = 0.0
    rules = LogitRules(tokenizer, options, backend.dims.n_vocab)
    text = Utf8Assembler()
    tokens: list[int] = []
    reason, step = "max_tokens", 0
    while True:
        lp = log_softmax(rules.apply(logits, tokens))
        top = np.argpartition(-lp, options.top_k)[:options.top_k]
        top = top[np.argsort(-lp[top])]
        tok = int(top[0])
        piece = b"" if tokenizer.is_special(tok) else tokenizer.token_bytes(tok)
        yield TokenEvent(window=window, step=step, token=tok, text=text.push(piece), logprob=float(lp[tok]),
                         eot_prob=float(np.exp(lp[sp.eot])), top=[(int(t), float(lp[t])) for t in top],
                         cache_len=stepper.length, cache_bytes=stepper.bytes_used,
                         ms=(time.perf_counter() - t_step) * 1e3, text_bytes=piece.hex(),
                         is_special=tokenizer.is_special(tok))
        if tok == sp.eot:
            reason = "eot"
            break
        tokens.append(tok)
        sum_logprob += float(lp[tok])
        if len(tokens) >= options.max_tokens:
            reason = "max_tokens"
            break
        if stepper.full:
            reason = "cache_full"
            break
        if should_cancel():
            reason = "cancelled"
            break
        step += 1
        t_step = time.perf_counter()
        logits = stepper.advance(tok)
    text.flush()
    segments, seek = split_segments(tokens, tokenizer, offset_s, segment_frames) if options.timestamps \
        else ([], segment_frames)
    yield DoneEvent(window=window, reason=reason, tokens=tokens, text=tokenizer.decode(tokens),
                    ms_total=(time.perf_counter() - t0) * 1e3, language=language, no_speech_prob=no_speech_prob,
                    avg_logprob=sum_logprob / max(1, len(tokens)), offset_s=offset_s, seek_frames=seek,
                    segments=[{"start": round(g.start, 3), "end": round(g.end, 3), "text": g.text} for g in segments])


def decode_windows(backend, tokenizer: WhisperTokenizer, mels: np.ndarray, options: DecodeOptions,
                   should_cancel: Callable[[], bool] = lambda: False,
                   encoder_cache: EncoderCache | None = None, n_frames: int | None = None) -> Iterator[Event]:
    """Decode [W, 80, 3000] mel windows; each window resets the self cache and recomputes cross K/V
    (or reuses them from `encoder_cache` when the same mel was seen). The language detected in the
    first window holds for the rest.

    Without timestamps the windows are consecutive 30 s slices. With timestamps the windows are
    joined back into one mel of `n_frames` content frames and, as Whisper does, each next window
    starts at the last timestamp the decoder emitted."""
    mels = np.asarray(mels).reshape(-1, *np.shape(mels)[-2:])
    full = np.concatenate(list(mels), axis=-1)
    total = min(n_frames or full.shape[-1], full.shape[-1])
    language, seek, window = options.language, 0, 0
    while seek < total and not should_cancel():
        if options.timestamps:
            mel, size = pad_or_trim(full[:, seek:seek + N_FRAMES]), min(N_FRAMES, total - seek)
        else:
            mel, size = mels[window], min(N_FRAMES, total - seek)
        for ev in decode_window(backend, tokenizer, mel, options, window, language, should_cancel,
                                encoder_cache, offset_s=seek / FRAMES_PER_SECOND, segment_frames=size):
            if isinstance(ev, EncodedEvent):
                language = ev.language
            yield ev
            if isinstance(ev, DoneEvent):
                if ev.reason == "cancelled":
                    return
                seek += ev.seek_frames if options.timestamps else N_FRAMES
        window += 1
