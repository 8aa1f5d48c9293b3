"""Errors the user can act on: each names the problem and the fix.

A fix that names a device setting keeps it as a field, not only as text:
`Fix("…, ", Setting("key", "PATH", "pass"), ", or …")` reads `…, pass ?key=PATH, or …` on the command line, and
the studio words the same setting as its form's field (app/board/form_terms.py) from the `Setting`, without
reading the text back."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

PLACEHOLDER = set("ABCDEFGHIJKLMNOPQRSTUVWXYZ_")


@dataclass(frozen=True)
class Setting:
    """A device setting a fix names, as the device URL writes it: `pass ?key=PATH`, `drop ?dir=`, `?backend=dla`."""

    name: str                              # its row of device/spec/settings.py
    value: str = ""                        # a value to copy, or a placeholder in capitals (PATH, DIR)
    verb: str = ""                         # "pass", "drop", or "" (the setting only named)
    absolute: bool = False                 # "pass an absolute ?dir=": the value is an absolute path
    more: tuple[tuple[str, str], ...] = ()  # further (name, value) of the same query: ?dir=RUNNER_DIR&python=…

    @property
    def placeholder(self) -> bool:
        """Its value is one to fill in (PATH, DIR, none at all), not one to copy."""
        return set(self.value) <= PLACEHOLDER

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *(name for name, _ in self.more))

    def to_wire(self) -> dict:
        """Its fields as the protocol's `error` event carries them (docs/protocol.md), the unset ones left out."""
        fields = {"value": self.value, "verb": self.verb, "absolute": self.absolute,
                  "more": [list(pair) for pair in self.more]}
        return {"setting": self.name, **{key: value for key, value in fields.items() if value}}

    @classmethod
    def from_wire(cls, fields: dict) -> Setting:
        more = tuple((name, value) for name, value in fields.get("more", ()))
        setting = cls(fields["setting"], fields.get("value", ""), fields.get("verb", ""),
                      fields.get("absolute") is True, more)
        texts = [setting.name, setting.value, setting.verb, *(text for pair in more for text in pair)]
        if not all(isinstance(text, str) for text in texts):
            raise TypeError(f"a setting's fields are strings: {fields!r}")
        return setting

    def __str__(self) -> str:
        query = "&".join(f"{name}={value}" for name, value in ((self.name, self.value), *self.more))
        words = [self.verb] if self.verb else []
        return " ".join(words + (["an absolute"] if self.absolute else []) + [f"?{query}"])


class Fix(str):
    """A fix's text, the CLI's line, that also keeps its parts: text, and the `Setting`s it names. A str, so that
    every reader of `err.fix` reads the line unchanged; `worded` says each setting in another reader's words."""

    parts: tuple[str | Setting, ...]

    def __new__(cls, *parts: str | Setting) -> Fix:
        flat: list[str | Setting] = []
        for part in parts:
            flat += part.parts if isinstance(part, Fix) else [part]
        fix = super().__new__(cls, "".join(map(str, flat)))
        fix.parts = tuple(flat)
        return fix

    @classmethod
    def join(cls, separator: str, fixes: Iterable[str | Setting]) -> Fix:
        """`separator.join(fixes)`, keeping the settings of those that are Fixes or Settings."""
        parts: list[str | Setting] = []
        for i, fix in enumerate(fixes):
            parts += [separator, fix] if i else [fix]
        return cls(*parts)

    def to_wire(self) -> list[str | dict]:
        """Its parts as the protocol's `error` event carries them: text, and each setting's fields."""
        return [part.to_wire() if isinstance(part, Setting) else part for part in self.parts]

    @classmethod
    def from_wire(cls, parts: object) -> Fix:
        """The Fix an `error` event's `fix` carries; ValueError when it is not one (a runner of another version)."""
        try:
            if not isinstance(parts, list):
                raise TypeError(f"a list of parts, not {type(parts).__name__}")
            return cls(*(part if isinstance(part, str) else Setting.from_wire(part) for part in parts))
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ValueError(f"an error event's fix is not one: {exc}") from None

    @property
    def settings(self) -> tuple[Setting, ...]:
        return tuple(part for part in self.parts if isinstance(part, Setting))

    def worded(self, say: Callable[[Setting], str]) -> str:
        """The line with each setting said by `say` (the studio: its form's field)."""
        return "".join(say(part) if isinstance(part, Setting) else part for part in self.parts)


def wire_fix(exc: BaseException) -> list[str | dict] | None:
    """The parts of `exc`'s fix for an `error` event, when it is a Fix; None for a fix of plain text."""
    fix = getattr(exc, "fix", None)
    return fix.to_wire() if isinstance(fix, Fix) else None


class WhisperKVError(Exception):
    """Base class. `str(err)` is one line: the problem, then what to do about it. `fix` is a str, or a Fix when it
    names device settings."""

    code = "error"

    def __init__(self, problem: str, fix: str = ""):
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} — {fix}" if fix else problem)


class AudioError(WhisperKVError):
    code = "bad_audio"


class ModelError(WhisperKVError):
    code = "model_missing"


class FeatureError(WhisperKVError):
    code = "bad_mel"
