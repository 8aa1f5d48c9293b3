"""What one transcription asks for, and its one wire encoding (docs/protocol.md, `transcribe`).

The CLI, the GUI's run controls, the QA suite and the runner all use this type; `to_wire` is what a
client sends and `from_wire` is the runner's check of what it received.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace

from core.model.dims import ModelDims
from core.model.mel import N_FRAMES

TASKS = ("transcribe", "translate")
MAX_TOP_K = 100


class OptionsError(ValueError):
    """A field that is out of range or of the wrong type; the message names it."""


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

    def __post_init__(self):
        if self.language in ("", "auto"):
            self.language = None
        if self.task not in TASKS:
            raise OptionsError(f"task must be transcribe or translate, not {self.task!r}")
        if self.max_tokens < 1:
            raise OptionsError("max_tokens must be at least 1")
        check_seed(self.seed)

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
                   {"prompt": list(self.prompt)} if self.prompt else {}) | ({"draft": list(self.draft)} if self.draft else {})

    def _fallback_wire(self) -> dict:
        return {"temperature_fallback": True, "seed": self.seed} if self.temperature_fallback else {}

    @classmethod
    def from_wire(cls, h: dict, languages=None, max_len: int = ModelDims().n_text_ctx,
                  n_vocab: int = ModelDims().n_vocab) -> "DecodeOptions":
        """Checked options from a header; OptionsError names the first bad field. `languages`: the
        tokenizer's language codes; `max_len`: the decoder's context (ModelDims.n_text_ctx)."""
        language = h.get("language")
        if language in ("auto", ""):
            language = None
        if language is not None and (not isinstance(language, str)
                                     or (languages is not None and language not in languages)):
            raise OptionsError(f"unknown language {language!r}; use null for auto-detect or a code such as 'en'")
        task = h.get("task", "transcribe")
        if task not in TASKS:
            raise OptionsError(f"task {task!r} is not 'transcribe' or 'translate'")
        cache = h.get("cache", "on")
        if cache not in ("on", "off"):
            raise OptionsError(f"cache {cache!r} is not 'on' or 'off'")
        max_tokens = h.get("max_tokens", MAX_TOKENS)
        if type(max_tokens) is not int or not 1 <= max_tokens <= max_len:
            raise OptionsError(f"max_tokens {max_tokens!r} is not an integer in 1..{max_len}")
        top_k = h.get("top_k", 5)
        if type(top_k) is not int or not 1 <= top_k <= MAX_TOP_K:
            raise OptionsError(f"top_k {top_k!r} is not an integer in 1..{MAX_TOP_K}")
        flags = {}
        for name in ("timestamps", "suppress_eot", "attention", "word_timestamps", "seek_timestamps"):
            flags[name] = h.get(name, False)
            if type(flags[name]) is not bool:
                raise OptionsError(f"{name} {flags[name]!r} is not true or false")
        fallback = h.get("temperature_fallback", False)
        if type(fallback) is not bool:
            raise OptionsError(f"temperature_fallback {fallback!r} is not true or false")
        seed = check_seed(h.get("seed", 0))
        prompt = checked_prompt(h.get("prompt", []), max_len, n_vocab)
        draft = checked_prompt(h.get("draft", []), max_len, n_vocab, "draft")
        return cls(language=language, task=task, cache=cache == "on", max_tokens=max_tokens, top_k=top_k, **flags,
                   temperature_fallback=fallback, seed=seed, prompt=prompt, draft=draft)


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


def checked_prompt(prompt, max_len: int = ModelDims().n_text_ctx, n_vocab: int = ModelDims().n_vocab,
                   name: str = "prompt") -> list[int]:
    """A wire `prompt` (or `draft`): a list of token ids in the vocabulary, no longer than `prompt_budget`."""
    if not isinstance(prompt, list) or any(type(t) is not int or not 0 <= t < n_vocab for t in prompt):
        raise OptionsError(f"{name} must be a list of token ids in 0..{n_vocab - 1}")
    if len(prompt) > prompt_budget(max_len):
        raise OptionsError(f"{name} has {len(prompt)} tokens; at most {prompt_budget(max_len)} fit the "
                           f"{max_len}-position decoder context (keep the last ones)")
    return prompt
