"""What the user asked for in one transcription: the run controls' values."""
from __future__ import annotations

from dataclasses import asdict, dataclass

LANGUAGES = ("auto", "en", "zh", "ja", "ko", "de", "fr", "es", "ru", "it", "pt", "nl", "ar", "hi")
TASKS = ("transcribe", "translate")
CACHE_CEILING = 448  # decoder positions: the self K/V cache cannot hold more


@dataclass
class RunOptions:
    language: str = "auto"
    task: str = "transcribe"
    cache: bool = True
    max_tokens: int = 224
    top_k: int = 5
    timestamps: bool = False
    suppress_eot: bool = False   # diagnostics: forbid EOT to drive a run into the 448 cache ceiling

    @property
    def language_or_none(self) -> str | None:
        return None if self.language == "auto" else self.language

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RunOptions":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in names})

    def label(self) -> str:
        extra = " · EOT suppressed" if self.suppress_eot else ""
        return f"{self.language} · {self.task} · cache {'on' if self.cache else 'off'} · max {self.max_tokens}{extra}"
