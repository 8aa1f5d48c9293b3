"""Decode telemetry: one event per encoder run, per decoded token, and per finished window.

These dataclasses are what the decoding loop yields, what the runner puts on the
wire (see docs/protocol.md), and what the CLI's --json and the GUI consume.
"""
from __future__ import annotations

import base64
import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from core.decode.quality import WindowQuality
from core.model.dims import FULL_WINDOW_S

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
    cross_dtype: str = ""     # the element it holds them in (float16 on the dla backend's native path)
    window_s: int = FULL_WINDOW_S   # the encoder window, seconds (core/model/dims.py); 30 from older runners
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
    if type(ev) is EncodedEvent and ev.window_s == FULL_WINDOW_S:
        del d["window_s"]      # Whisper's own window, as every runner's events leave it unsaid (the native runner's)
    return d


# JSON has no -inf or NaN, so the runner sends null for a float that is not finite (docs/protocol.md, "Numbers
# that are not finite"). Read back, a null log-probability is log(0) = -inf (a token the logit rules forbade);
# any other null float is a value that could not be computed: NaN.
LOG_PROBABILITIES = frozenset({"logprob", "avg_logprob"})


def float_from_wire(name: str, v) -> float:
    if v is None:
        return -math.inf if name in LOG_PROBABILITIES else math.nan
    return float(v)


def _floats_back(d: dict) -> dict:
    """A dict of a list field (segments, words) or of language_probs: its nulls back to floats."""
    return {k: float_from_wire(k, v) if v is None else v for k, v in d.items()}


def _float_fields(cls) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls) if f.type == "float")


_FLOATS = {cls: _float_fields(cls) for cls in (EncodedEvent, TokenEvent, DoneEvent, WindowQuality)}


def dataclass_from_wire(cls, d: dict):
    """`cls` from a wire dict: unknown keys dropped, every float field restored from null."""
    floats = _FLOATS[cls]
    return cls(**{k: float_from_wire(k, v) if k in floats else v
                  for k, v in d.items() if k in cls.__dataclass_fields__})


def top_from_wire(pairs) -> list[tuple[int, float]]:
    """Top-k pairs; an older runner's entries of a forbidden token (null, i.e. -inf) are left out, as the
    runner itself now leaves them out: the list never offers an impossible token as a candidate."""
    return [(int(t), float(lp)) for t, lp in pairs if lp is not None and math.isfinite(lp)]


def event_from_dict(d: dict) -> Event:
    cls = _BY_TYPE[d["type"]]
    ev = dataclass_from_wire(cls, d)
    if cls is TokenEvent:
        ev.top = top_from_wire(ev.top or [])
        if isinstance(ev.attention, dict):
            ev.attention = attention_from_dict(ev.attention)
    elif cls is DoneEvent:
        if isinstance(ev.quality, dict):
            ev.quality = dataclass_from_wire(WindowQuality, ev.quality)
        ev.segments = [_floats_back(g) for g in ev.segments]
        ev.words = [_floats_back(w) for w in ev.words]
    else:
        ev.language_probs = _floats_back(ev.language_probs)
    return ev
