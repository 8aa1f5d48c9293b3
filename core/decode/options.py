"""What one transcription asks for, its one wire encoding (docs/protocol.md, `transcribe`) and its one check.

The CLI, the GUI's run controls, the QA suite, live streams and the runner all use this type; `to_wire` is what a
client sends and `from_wire` the runner's reading of what it received. Whichever door options come in by, one
function, `check_options`, applies every rule (as openai-whisper's `DecodingTask._verify_options`).
"""
from __future__ import annotations

from dataclasses import InitVar, asdict, dataclass, field, fields, replace
from typing import NamedTuple

from core.model.dims import FULL_WINDOW_S, WINDOWS_S, ModelDims
from core.model.mel import N_FRAMES

TASKS = ("transcribe", "translate")
MAX_TOP_K = 100


class OptionsError(ValueError):
    """A field that is out of range or of the wrong type, or fields that do not go together; the message names it."""


# The attention-needs-cache rule's reason, in the words every door shows.
UNCACHED_HAS_NO_ATTENTION = "the uncached reference runs the full decoder graph, which has no attention output"


class AttentionNeedsCache(OptionsError):
    """Attention, or word timings (made from it), asked for with the cache off. `asked` names the field, so that a
    front end can word it in its own names (the CLI's flags)."""

    def __init__(self, asked: str):
        self.asked = asked
        super().__init__(f"{asked} needs cache on: {UNCACHED_HAS_NO_ATTENTION}; turn the cache on or leave "
                         f"{asked} off")


class Bounds(NamedTuple):
    """What the model allows, where it is known: its tokenizer's language codes, its decoder's context
    (ModelDims.n_text_ctx) and its vocabulary. None: not known here, so not checked: options made before any
    model answers, or for a decode in this process, which may ask for more tokens than its cache holds and stop
    at cache_full (a QA suite's forced loop). `windows`: the encoder windows the backend serves (None: the table's,
    core/model/dims.py WINDOWS_S)."""
    languages: object = None
    max_len: int | None = None
    n_vocab: int | None = None
    windows: tuple[int, ...] | None = None


WHISPER = Bounds(None, ModelDims().n_text_ctx, ModelDims().n_vocab)   # the wire reader's, without a model


MAX_TOKENS = 224   # sampled tokens per window: Whisper's default sample_len, the one default everywhere


@dataclass
class DecodeOptions:
    language: str | None = None   # None or "auto": detect from the language-token probabilities
    task: str = "transcribe"      # or "translate"
    cache: bool = True
    max_tokens: int = MAX_TOKENS  # sampled tokens per window
    top_k: int = 5
    timestamps: bool = False      # timed segments, shown
    # Timestamp tokens sampled only to seek through long audio (`for_length`); the text stays plain, no segments.
    seek_timestamps: bool = False
    suppress_eot: bool = False    # diagnostics: forbid EOT to provoke a run into the cache ceiling
    attention: bool = False       # each token event carries the alignment heads' cross-attention
    word_timestamps: bool = False  # words with times (core/decode/word_timing.py); needs the attention
    temperature_fallback: bool = False  # re-decode a window that fails whisper's thresholds (core/decode/quality.py)
    seed: int = 0                 # the sampling RNG of those re-decodes: the same seed, the same tokens
    # Tokens of earlier text, fed as <|startofprev|> + prompt before the SOT sequence (Whisper's prompt)
    prompt: list[int] = field(default_factory=list)
    # Tokens this decode is expected to produce (a live stream's previous pass): fed with the prefix in one
    # batched call and kept as far as greedy decoding agrees with them. The tokens do not change, only the cost.
    draft: list[int] = field(default_factory=list)
    # The encoder window, in seconds: the mel's first window_s are encoded (core/model/dims.py WINDOWS_S); 30 is
    # Whisper's own and what a runner without `windows` in its hello serves.
    window_s: int = FULL_WINDOW_S

    # The model's bounds when known (the runner's `from_wire`); not a field, so never saved nor compared.
    bounds: InitVar[Bounds | None] = None

    def __post_init__(self, bounds: Bounds | None):
        if self.language in ("", "auto"):
            self.language = None
        check_options(self, bounds or Bounds())

    @property
    def wants_attention(self) -> bool:
        return self.attention or self.word_timestamps

    @property
    def timestamp_tokens(self) -> bool:
        """Whether the decoder samples timestamp tokens: to show segments, or only to seek."""
        return self.timestamps or self.seek_timestamps

    @property
    def language_label(self) -> str:
        return self.language or "auto"

    def label(self, detected: str = "") -> str:
        """One line for a run picker; `detected`: the language an `auto` run found, shown beside it."""
        extra = " · EOT suppressed" if self.suppress_eot else ""
        language = f"{self.language_label} → {detected}" if self.language is None and detected else self.language_label
        return (f"{language} · {self.task} · cache {'on' if self.cache else 'off'} · "
                f"max {self.max_tokens}{extra}")

    # --- settings and session files ------------------------------------------------------------
    def to_dict(self) -> dict:
        return asdict(self) | {"language": self.language_label}

    @classmethod
    def from_dict(cls, d: dict) -> "DecodeOptions":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    # --- the wire --------------------------------------------------------------------------------
    def to_wire(self) -> dict:
        """The `transcribe` header fields (cache travels as "on"/"off", auto language as null)."""
        return {"language": self.language, "task": self.task, "cache": "on" if self.cache else "off",
                "max_tokens": self.max_tokens, "top_k": self.top_k, "timestamps": self.timestamps,
                "suppress_eot": self.suppress_eot} | {name: True for name in ("attention", "word_timestamps",
                                                                                    "seek_timestamps")
                                                      if getattr(self, name)} | self._fallback_wire() | (
                   {"prompt": list(self.prompt)} if self.prompt else {}) | (
                   {"draft": list(self.draft)} if self.draft else {}) | (
                   {"window_s": self.window_s} if self.window_s != FULL_WINDOW_S else {})

    def _fallback_wire(self) -> dict:
        return {"temperature_fallback": True, "seed": self.seed} if self.temperature_fallback else {}

    def with_attention(self, wanted: bool = True) -> "DecodeOptions":
        """These options with the alignment heads' attention when `wanted`, as far as the rules allow: not with
        the cache off."""
        return replace(self, attention=wanted and self.cache)

    @classmethod
    def from_wire(cls, h: dict, languages=None, max_len: int = ModelDims().n_text_ctx,
                  n_vocab: int = ModelDims().n_vocab, windows: tuple[int, ...] | None = None) -> "DecodeOptions":
        """Checked options from a header; OptionsError names the first bad field. `languages`: the
        tokenizer's language codes; `max_len`: the decoder's context (ModelDims.n_text_ctx); `windows`: the
        encoder windows the backend serves."""
        cache = h.get("cache", "on")
        if cache not in ("on", "off"):
            raise OptionsError(f"cache {cache!r} is not 'on' or 'off'")
        values = {f.name: h[f.name] for f in fields(cls) if f.name in h}
        return cls(**values | {"cache": cache == "on"}, bounds=Bounds(languages, max_len, n_vocab, windows))


FLAGS = ("timestamps", "suppress_eot", "attention", "word_timestamps", "seek_timestamps", "temperature_fallback")


def check_options(o: DecodeOptions, bounds: Bounds = Bounds()) -> DecodeOptions:
    """Every rule of DecodeOptions, from every door (the constructor runs it; `bounds`: the model's, where
    known): OptionsError names the first field that breaks one."""
    languages, max_len, n_vocab, windows = bounds
    if o.language is not None and (not isinstance(o.language, str)
                                   or (languages is not None and o.language not in languages)):
        raise OptionsError(f"unknown language {o.language!r}; use null for auto-detect or a code such as 'en'")
    if o.task not in TASKS:
        raise OptionsError(f"task {o.task!r} is not 'transcribe' or 'translate'")
    if type(o.cache) is not bool:
        raise OptionsError(f"cache {o.cache!r} is not on or off")
    if type(o.max_tokens) is not int or not 1 <= o.max_tokens <= (max_len or o.max_tokens):
        raise OptionsError(f"max_tokens {o.max_tokens!r} is not an integer "
                           + (f"in 1..{max_len}" if max_len else "of at least 1"))
    if type(o.top_k) is not int or not 1 <= o.top_k <= MAX_TOP_K:
        raise OptionsError(f"top_k {o.top_k!r} is not an integer in 1..{MAX_TOP_K}")
    for name in FLAGS:
        if type(getattr(o, name)) is not bool:
            raise OptionsError(f"{name} {getattr(o, name)!r} is not true or false")
    check_seed(o.seed)
    checked_prompt(o.prompt, max_len, n_vocab)
    checked_prompt(o.draft, max_len, n_vocab, "draft")
    if o.wants_attention and not o.cache:
        raise AttentionNeedsCache("word_timestamps" if o.word_timestamps else "attention")
    check_window(o, windows or WINDOWS_S)
    return o


def check_window(o: DecodeOptions, windows: tuple[int, ...]) -> None:
    """window_s: one of the lengths served (a shorter window's attention rows hold its positions only,
    window_s * 50: docs/protocol.md)."""
    if type(o.window_s) is not int or o.window_s not in windows:
        raise OptionsError(f"window_s {o.window_s!r} is not a window this runner serves: "
                           f"{', '.join(map(str, windows))} (seconds)")


def for_length(options: DecodeOptions, n_frames: int) -> DecodeOptions:
    """The options a decode of `n_frames` mel frames runs with. Audio longer than one window is decoded with
    timestamp tokens, as openai-whisper does, so each next window starts after the last complete segment: a
    window whose decoder ends at a pause would otherwise take the speech after that pause with it when the
    next window starts 30 s on. One window's options stay as they were asked for."""
    if n_frames > N_FRAMES and not options.timestamp_tokens:
        return replace(options, seek_timestamps=True)
    return options


def check_seed(seed) -> int:
    if type(seed) is not int or not 0 <= seed < 2 ** 63:
        raise OptionsError(f"seed {seed!r} is not an integer in 0..2**63-1")
    return seed


def prompt_budget(max_len: int = ModelDims().n_text_ctx) -> int:
    """Whisper's limit on prompt tokens, n_text_ctx // 2 - 1 (223): half the context stays for the output."""
    return max_len // 2 - 1


def checked_prompt(prompt, max_len: int | None = None, n_vocab: int | None = None, name: str = "prompt") -> list[int]:
    """A `prompt` (or `draft`): a list of token ids, in the vocabulary and no longer than `prompt_budget` where
    the model is known."""
    if not isinstance(prompt, list) or any(type(t) is not int or not 0 <= t < (n_vocab or t + 1) for t in prompt):
        raise OptionsError(f"{name} must be a list of token ids" + (f" in 0..{n_vocab - 1}" if n_vocab else ""))
    if max_len is not None and len(prompt) > prompt_budget(max_len):
        raise OptionsError(f"{name} has {len(prompt)} tokens; at most {prompt_budget(max_len)} fit the "
                           f"{max_len}-position decoder context (keep the last ones)")
    return prompt
