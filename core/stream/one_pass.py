"""One pass of the live stream: the buffer's mel through any decoder (a runner request, or the model in
this process), folded into timed words and a record of what it cost."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from core.decode.quality import COMPRESSION_RATIO_THRESHOLD, compression_ratio
from core.decode.steppers import PREFILL_MIN
from core.decode.window_feed import DecodeOne
from core.decode.word_timing import Word, window_words
from core.model.audio import SAMPLE_RATE
from core.model.dims import FULL_WINDOW_S
from core.model.mel import content_frames, log_mel, pad_or_trim
from core.model.tokenizer import WhisperTokenizer
from core.stream.events import PassRecord


@dataclass
class PassResult:
    words: list[Word]         # timed in seconds of the stream (the buffer's offset added)
    record: PassRecord
    language: str
    silent: bool              # Whisper's no-speech rule: the pass heard no speech, its words are dropped
    tokens: list[int] = field(default_factory=list)   # the text tokens decoded: the next pass's draft
    # What the decoder looked at (AlignAtt reads it): the sampled tokens with an attention row, EOT last when
    # reached, their alignment-head rows [len(sampled), heads, A] (A: the encoder window's positions, 50 a second),
    # and the buffer's mel frames of audio.
    sampled: list[int] = field(default_factory=list)
    attention: np.ndarray | None = None
    n_frames: int = 0
    looped: bool = False      # it ran to its token cap or its text repeats (whisper's compression ratio)


def buffer_mel(audio: np.ndarray) -> tuple[np.ndarray, int]:
    """[1, 80, 3000] log-mel of up to 30 s of audio, and how many of its frames hold audio."""
    return pad_or_trim(log_mel(audio))[None], min(content_frames(audio), 3000)


def run_pass(decode_one: DecodeOne, tokenizer: WhisperTokenizer, audio: np.ndarray, offset_s: float,
             options: DecodeOptions, at_s: float = 0.0, final: bool = False) -> PassResult:
    t0 = time.perf_counter()
    mel, n_frames = buffer_mel(audio)
    tokens: list[TokenEvent] = []
    encoded, done = None, None
    events = decode_one(mel, options, n_frames)
    try:
        for ev in events:
            if isinstance(ev, EncodedEvent):
                encoded = ev
            elif isinstance(ev, TokenEvent):
                tokens.append(ev)
            elif isinstance(ev, DoneEvent):
                done = ev
                break
    finally:
        getattr(events, "close", lambda: None)()
    words = window_words(tokens, replace(done, offset_s=offset_s), tokenizer, n_frames) if done else []
    record = PassRecord(audio_s=round(len(audio) / SAMPLE_RATE, 3), encoder_ms=round(encoded.ms if encoded else 0.0, 3),
                        tokens=len(done.tokens) if done else 0, decode_ms=round(sum(t.ms for t in tokens), 3),
                        cache_len=max((t.cache_len for t in tokens), default=0), at_s=round(at_s, 3),
                        buffer_start_s=round(offset_s, 3), prompt_tokens=len(options.prompt),
                        cache_hit=bool(encoded and encoded.cache_hit), final=final,
                        token_ms=[round(t.ms, 3) for t in tokens], eot_probs=[round(t.eot_prob, 5) for t in tokens],
                        token_drafted=[t.drafted for t in tokens],
                        window_s=encoded.window_s if encoded else FULL_WINDOW_S)
    silent = done is None or done.is_silence
    record.wall_ms = round((time.perf_counter() - t0) * 1e3, 3)
    language = (encoded.language if encoded else "") or options.language or ""
    rows = [t for t in tokens if t.attention is not None]
    attention = np.stack([np.asarray(t.attention) for t in rows]) if rows else None
    looped = done is not None and (done.reason == "max_tokens"
                                   or compression_ratio(done.text) > COMPRESSION_RATIO_THRESHOLD)
    return PassResult([] if silent else words, record, language, silent, list(done.tokens) if done else [],
                      [t.token for t in rows], attention, n_frames, looped)


def warm_up(decode_one: DecodeOne, language: str | None = None, windows: tuple[int, ...] = (FULL_WINDOW_S,)) -> None:
    """One token of a silent second in each encoder window of `windows` through the decoder with word timings and
    a draft, before a live stream starts: a runner builds its attention step graph, its batched prefill and each
    window's encoder on first use (or loads them from its start-up cache), which would otherwise stall the first
    passes."""
    mel, n_frames = buffer_mel(np.zeros(SAMPLE_RATE, np.float32))
    draft = [220] * PREFILL_MIN      # any text tokens: enough with the SOT sequence to take the batched path
    for window_s in windows:
        events = decode_one(mel, DecodeOptions(language=language or "en", max_tokens=1, word_timestamps=True,
                                               draft=draft, window_s=window_s), n_frames)
        try:
            for ev in events:
                if isinstance(ev, DoneEvent):
                    break
        finally:
            getattr(events, "close", lambda: None)()
