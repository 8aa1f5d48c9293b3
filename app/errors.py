"""Turning any exception into the (problem, fix, code) triple the error dialog shows."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from core.errors import WhisperKVError


@dataclass
class Failure:
    problem: str
    fix: str
    code: str = "error"

    def to_dict(self) -> dict:
        return asdict(self)


def failure_of(exc: BaseException) -> Failure:
    if isinstance(exc, WhisperKVError):
        return Failure(exc.problem, exc.fix or "try again; if it keeps failing, report it with the session JSON",
                       getattr(exc, "code", "error"))
    if isinstance(exc, MemoryError):
        return Failure("out of memory", "close other programs or use shorter audio", "memory")
    # Anything else is a bug: name it plainly instead of showing a traceback.
    return Failure(f"unexpected {type(exc).__name__}: {exc}",
                   "try again; if it keeps failing, export the session JSON and report it", "internal")
