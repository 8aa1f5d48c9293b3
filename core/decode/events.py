"""Decode telemetry: one event per encoder run, per decoded token, and per finished window.

These dataclasses are what the decoding loop yields, what the runner puts on the
wire (see docs/protocol.md), and what the CLI's --json and the GUI consume.
"""
from __future__ import annotations

import base64
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from core.decode.quality import WindowQuality

STOP_REASONS = ("eot", "max_tokens", "cache_full", "cancelled", "error")


@dataclass
class EncodedEvent:
    window: int
    ms: float
    language: str = ""
    language_probs: dict[str, float] = field(default_factory=dict)  # top few, when auto-detected
    cache_hit: bool = False
    offset_s: float = 0.0     # where this window starts in the audio
    cross_form: str = ""      # kv or absorbed (core/model/backend.py); "" from a runner that does not say
    cross_bytes: int = 0      # bytes of the window's cross state the runner holds (cross K/V, or F)
    type: str = "encoded"


@dataclass
class TokenEvent:
    window: int
    step: int                 # 0-based index of the sampled token within its window
    token: int
    text: str                 # printable piece; "" while a UTF-8 character is still incomplete
    logprob: float
    eot_prob: float           # p(EOT) at this step, after the logit rules
    top: list[tuple[int, float]]  # top-k alternatives as (token, logprob)
    cache_len: int            # self-attention cache fill after this step's write
    cache_bytes: int          # bytes of self K/V in use (k and v, all layers)
    ms: float                 # runner compute for this step (the first step includes the SOT prefix)
    text_bytes: str = ""      # hex of this token's raw bytes (byte-level BPE)
    is_special: bool = False
    # The alignment heads' cross-attention of the step that chose this token, float16 [heads, 1500]
    # (only when DecodeOptions.attention); in dicts, {"shape", "fp16"} with the bytes in base64.
    attention: np.ndarray | None = None
    entropy: float = 0.0      # nats: of the next-token distribution this step sampled from, after the logit rules
    temperature: float = 0.0  # of the decode this step belongs to: > 0 in a temperature-fallback re-decode
    # Chosen from logits the batched prefill already computed for a drafted token (DecodeOptions.draft): no
    # graph call of its own, so its `ms` is near zero.
    drafted: bool = False
    type: str = "token"


@dataclass
class DoneEvent:
    window: int
    reason: str               # one of STOP_REASONS
    tokens: list[int]         # sampled text tokens of this window (no prefix, no EOT)
    text: str
    ms_total: float
    language: str = ""
    no_speech_prob: float = 0.0   # p(<|nospeech|>) at the SOT position
    avg_logprob: float = 0.0      # mean logprob of the sampled tokens
    offset_s: float = 0.0         # where this window starts in the audio
    seek_frames: int = 3000       # mel frames (10 ms) the next window starts after this one's start
    segments: list[dict] = field(default_factory=list)  # timestamps mode: [{start, end, text}] in seconds
    quality: WindowQuality | None = None   # whisper's window-quality signals, and the fallbacks that fired
    words: list[dict] = field(default_factory=list)  # word_timestamps: [{word, start, end, probability}], seconds
    type: str = "done"

    @property
    def is_silence(self) -> bool:
        """Whisper's rule for a window with no speech: its text is not shown."""
        return self.no_speech_prob > 0.6 and self.avg_logprob < -1.0


Event = EncodedEvent | TokenEvent | DoneEvent
_BY_TYPE = {"encoded": EncodedEvent, "token": TokenEvent, "done": DoneEvent}


def attention_to_dict(a: np.ndarray) -> dict:
    a = np.ascontiguousarray(a, "<f2")
    return {"shape": list(a.shape), "fp16": base64.b64encode(a.tobytes()).decode("ascii")}


def attention_from_dict(d: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(d["fp16"]), "<f2").reshape(d["shape"])


_TOKEN_FIELDS = tuple(f.name for f in fields(TokenEvent))


def event_to_dict(ev: Event) -> dict:
    # A token event holds scalars, its `top` pairs and the attention array, none of which a frame changes: a
    # shallow copy. asdict's recursive one was most of a token frame's cost, paid between two decoder steps.
    d = {name: getattr(ev, name) for name in _TOKEN_FIELDS} if type(ev) is TokenEvent else asdict(ev)
    if "attention" in d:
        # absent unless asked for: an ordinary run's token events are not a byte longer
        if d["attention"] is None:
            del d["attention"]
        else:
            d["attention"] = attention_to_dict(d["attention"])
    return d


def event_from_dict(d: dict) -> Event:
    cls = _BY_TYPE[d["type"]]
    names = {f.name for f in fields(cls)}
    kw = {k: v for k, v in d.items() if k in names}
    if cls is DoneEvent and isinstance(kw.get("quality"), dict):
        kw["quality"] = WindowQuality.from_dict(kw["quality"])
    if cls is TokenEvent:
        kw["top"] = [(int(t), float(lp)) for t, lp in kw.get("top", [])]
        if isinstance(kw.get("attention"), dict):
            kw["attention"] = attention_from_dict(kw["attention"])
    return cls(**kw)
