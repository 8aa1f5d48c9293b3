"""Greedy decoding over the MTK-form graphs, one telemetry event per step.

The cached path feeds one token per step graph call and keeps K/V in a `KVCache`; the
uncached path reruns the full causal decoder over every token at every step. Both apply
the same logit rules, so their tokens must be identical.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Generator, Iterator

import numpy as np

from core.decode.events import DoneEvent, EncodedEvent, Event, TokenEvent
from core.decode.logit_rules import LogitRules, detect_language, log_softmax
from core.decode.options import DecodeOptions
from core.decode.quality import FALLBACK_TEMPERATURES, window_quality
from core.decode.steppers import CachedStepper, Stepper, UncachedStepper
from core.decode.timestamps import kept_length, split_segments
from core.decode.window_feed import HeldMels, decode_source
from core.decode.word_timing import window_words
from core.model.backend import Backend, cross_bytes, cross_form, encode_sized
from core.model.dims import FULL_WINDOW_S
from core.model.encoder_cache import EncoderCache, cross_key
from core.model.mel import N_FRAMES
from core.model.tokenizer import Utf8Assembler, WhisperTokenizer


def encoder_features(backend: Backend, mel: np.ndarray, encoder_cache: EncoderCache | None,
                     window_s: int = FULL_WINDOW_S) -> tuple[tuple[np.ndarray, np.ndarray], bool]:
    """The cross K/V of the mel's first `window_s`, and whether `encoder_cache` already held them (the encoder then
    does not run)."""
    key = cross_key(backend, mel, window_s) if encoder_cache is not None else ""
    cached = encoder_cache.get(key) if encoder_cache is not None else None
    if cached is not None:
        return cached, True
    cross = encode_sized(backend, mel.reshape(1, *mel.shape[-2:]), window_s)
    if encoder_cache is not None:
        encoder_cache.put(key, cross)
    return cross, False


@dataclass
class Sampled:
    """What the main loop leaves behind for the window's result."""
    tokens: list[int] = field(default_factory=list)   # sampled text tokens, no EOT
    reason: str = "max_tokens"
    sum_logprob: float = 0.0
    entropies: list[float] = field(default_factory=list)   # every step's, EOT's too
    events: list[TokenEvent] = field(default_factory=list)  # kept for word timings only


class WindowDecoder:
    """Greedy decoding of one 30 s window, in the steps of openai-whisper's `DecodingTask.run`:
    encoder features, language, SOT prefix, main loop, result. Each step's ms counts from the end
    of the previous one, so the first token's ms includes language detection and the prefix."""

    def __init__(self, backend: Backend, tokenizer: WhisperTokenizer, options: DecodeOptions, window: int = 0,
                 should_cancel: Callable[[], bool] = lambda: False):
        self.backend, self.tokenizer, self.options = backend, tokenizer, options
        self.window, self.should_cancel = window, should_cancel
        self.special = tokenizer.special
        self.t_step = 0.0         # when the current step began: its TokenEvent's ms counts from here

    def run(self, mel: np.ndarray, language: str | None = None, encoder_cache: EncoderCache | None = None,
            offset_s: float = 0.0, segment_frames: int = N_FRAMES) -> Iterator[Event]:
        t0 = time.perf_counter()
        window_s = self.options.window_s
        (cross_k, cross_v), cache_hit = encoder_features(self.backend, mel, encoder_cache, window_s)
        enc_ms = (time.perf_counter() - t0) * 1e3
        self.t_step = time.perf_counter()
        stepper = self.stepper(cross_k, cross_v)
        language, probs, sot_logits = self.language(stepper, language)
        if self.options.prompt and stepper.length:
            # Detected on <|startoftranscript|> alone, as whisper does; the decode then starts over with the prompt.
            stepper, sot_logits = self.stepper(cross_k, cross_v), None
        yield EncodedEvent(window=self.window, ms=enc_ms, language=language, language_probs=probs,
                           cache_hit=cache_hit, offset_s=offset_s, cross_form=cross_form(self.backend),
                           cross_bytes=cross_bytes(cross_k, cross_v), cross_dtype=str(cross_k.dtype),
                           window_s=window_s)
        # Greedy first; with temperature_fallback, whisper's re-decodes at rising temperatures while the
        # window fails its thresholds. Each attempt's token events go out live, marked with its temperature.
        temperatures = (0.0, *FALLBACK_TEMPERATURES) if self.options.temperature_fallback else (0.0,)
        rng = np.random.default_rng(self.options.seed)
        fallbacks: list[str] = []
        for i, temperature in enumerate(temperatures):
            if i:
                stepper, sot_logits, self.t_step = self.stepper(cross_k, cross_v), None, time.perf_counter()
            # A draft is checked against greedy choices only: a re-decode at a temperature samples.
            logits, sot_logits = self.prefix(stepper, language, sot_logits, self.options.draft if i == 0 else ())
            no_speech_prob = float(np.exp(log_softmax(sot_logits)[self.special.no_speech]))
            sampled = yield from self.main_loop(stepper, logits, temperature, rng)
            done = self.result(sampled, language, no_speech_prob, t0, offset_s, segment_frames, temperature, fallbacks)
            if sampled.reason == "cancelled" or i == len(temperatures) - 1 or not done.quality.needs_fallback():
                break
            fallbacks.append(done.quality.fallback_note())
        if self.options.word_timestamps:
            kept = sampled.events[:kept_length(done.tokens, self.tokenizer)] if self.options.timestamp_tokens \
                else sampled.events
            done.words = [w.to_dict() for w in window_words(kept, done, self.tokenizer, segment_frames)]
        yield done

    def stepper(self, cross_k: np.ndarray, cross_v: np.ndarray) -> Stepper:
        if self.options.cache:
            return CachedStepper(self.backend, cross_k, cross_v, self.options.wants_attention)
        return UncachedStepper(self.backend, cross_k, cross_v)

    def prefix_tokens(self, language: str) -> list[int]:
        """What the decoder is fed before the first sampled token: <|startofprev|> + prompt, if any, then
        the SOT sequence."""
        sot = self.tokenizer.sot_sequence(language, self.options.task, self.options.timestamp_tokens)
        return ([self.special.sot_prev, *self.options.prompt] if self.options.prompt else []) + sot

    def language(self, stepper: Stepper, language: str | None) -> tuple[str, dict[str, float], np.ndarray | None]:
        """The given language, or the one the SOT position's logits favour (those logits are kept)."""
        if language is not None:
            return language, {}, None
        sot_logits = stepper.advance(self.special.sot)
        language, probs = detect_language(self.tokenizer, sot_logits)
        return language, probs, sot_logits

    def prefix(self, stepper: Stepper, language: str, sot_logits: np.ndarray | None,
               draft: list[int] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Feed the rest of the SOT sequence (with `draft`, the tokens expected after it: Stepper.feed):
        (the logits for the first sampled token, the SOT logits)."""
        tokens = self.prefix_tokens(language)[stepper.length:]
        rows = stepper.feed(tokens, draft)
        if self.special.sot in tokens:
            sot_logits = rows[tokens.index(self.special.sot)]
        return rows[-1], sot_logits

    def main_loop(self, stepper: Stepper, logits: np.ndarray, temperature: float = 0.0,
                  rng: np.random.Generator | None = None) -> Generator[TokenEvent, None, Sampled]:
        """Sample (greedily at temperature 0), one TokenEvent a step, until a stop rule fires."""
        options, tokenizer, eot = self.options, self.tokenizer, self.special.eot
        rules = LogitRules(tokenizer, options, self.backend.dims.n_vocab)
        text = Utf8Assembler()
        out = Sampled()
        step = 0
        while True:
            p = rules.pick(logits, out.tokens)
            if temperature > 0:
                tok, logprob = rules.sample(p, temperature, rng)
            else:
                tok, logprob = int(p.top[0]), float(p.logprobs[0])
            piece = b"" if tokenizer.is_special(tok) else tokenizer.token_bytes(tok)
            ev = TokenEvent(window=self.window, step=step, token=tok, text=text.push(piece),
                            logprob=logprob, eot_prob=float(np.exp(p.eot_logprob)),
                            top=list(zip(p.top.tolist(), p.logprobs.tolist())), cache_len=stepper.length,
                            cache_bytes=stepper.bytes_used, ms=(time.perf_counter() - self.t_step) * 1e3,
                            text_bytes=piece.hex(), is_special=tokenizer.is_special(tok),
                            attention=stepper.attention, entropy=p.entropy, temperature=temperature,
                            drafted=stepper.from_draft)
            out.entropies.append(p.entropy)
            if options.word_timestamps:
                out.events.append(ev)
            yield ev
            if tok == eot:
                out.reason = "eot"
                return out
            out.tokens.append(tok)
            out.sum_logprob += logprob
            reason = self.stop_reason(out.tokens, stepper)
            if reason:
                out.reason = reason
                return out
            step += 1
            self.t_step = time.perf_counter()
            logits = stepper.advance(tok)

    def stop_reason(self, tokens: list[int], stepper: Stepper) -> str | None:
        if len(tokens) >= self.options.max_tokens:
            return "max_tokens"
        if stepper.full:
            return "cache_full"
        if self.should_cancel():
            return "cancelled"
        return None

    def result(self, sampled: Sampled, language: str, no_speech_prob: float, t0: float, offset_s: float,
               segment_frames: int, temperature: float = 0.0, fallbacks: list[str] = ()) -> DoneEvent:
        tokens, timed = sampled.tokens, self.options.timestamp_tokens
        segments, seek = split_segments(tokens, self.tokenizer, offset_s, segment_frames) if timed \
            else ([], segment_frames)
        decoded = self.tokenizer.decode(tokens)    # what whisper's thresholds judge
        # The text shown is that of the complete segments: an unfinished one is decoded again by the next window.
        text = self.tokenizer.decode(tokens[:kept_length(tokens, self.tokenizer)]) if timed else decoded
        avg_logprob = sampled.sum_logprob / max(1, len(tokens))
        if not self.options.timestamps:
            segments = []      # timestamps only to seek: the run shows plain text
        entropy = float(np.mean(sampled.entropies)) if sampled.entropies else 0.0
        return DoneEvent(window=self.window, reason=sampled.reason, tokens=tokens, text=text,
                         ms_total=(time.perf_counter() - t0) * 1e3, language=language,
                         no_speech_prob=no_speech_prob, avg_logprob=avg_logprob,
                         offset_s=offset_s, seek_frames=seek,
                         segments=[{"start": round(g.start, 3), "end": round(g.end, 3), "text": g.text}
                                   for g in segments],
                         quality=window_quality(decoded, avg_logprob, no_speech_prob, round(entropy, 4), temperature,
                                                fallbacks))


def decode_window(backend: Backend, tokenizer: WhisperTokenizer, mel: np.ndarray, options: DecodeOptions,
                  window: int = 0, language: str | None = None,
                  should_cancel: Callable[[], bool] = lambda: False,
                  encoder_cache: EncoderCache | None = None, offset_s: float = 0.0,
                  segment_frames: int = N_FRAMES) -> Iterator[Event]:
    """Encode one [80, 3000] window (or take its cross K/V from `encoder_cache`) and decode it greedily.
    `offset_s` is where the window starts in the audio; `segment_frames` how many of its frames hold audio."""
    return WindowDecoder(backend, tokenizer, options, window, should_cancel).run(mel, language, encoder_cache,
                                                                                 offset_s, segment_frames)


def decode_windows(backend: Backend, tokenizer: WhisperTokenizer, mels: np.ndarray, options: DecodeOptions,
                   should_cancel: Callable[[], bool] = lambda: False,
                   encoder_cache: EncoderCache | None = None, n_frames: int | None = None) -> Iterator[Event]:
    """Decode [W, 80, 3000] mel windows in this process, through the host's one seek loop
    (core/decode/window_feed.py): each window resets the self cache and recomputes cross K/V (or reuses them
    from `encoder_cache` when the same mel was seen)."""
    def one(mel: np.ndarray, opts: DecodeOptions, size: int) -> Iterator[Event]:
        return decode_window(backend, tokenizer, mel[0], opts, language=opts.language, should_cancel=should_cancel,
                             encoder_cache=encoder_cache, segment_frames=size)

    return decode_source(HeldMels(mels, n_frames or 0), options, one, should_cancel)
