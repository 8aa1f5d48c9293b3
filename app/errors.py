"""Turning any exception into the (problem, fix, code) triple the error dialog shows, plus the one action
that may mend it (a dead runner or a lost link: Restart runner)."""
from __future__ import annotations

from dataclasses import dataclass

from core.errors import WhisperKVError

RESTART_RUNNER = "Restart runner"
# The runner died, the link dropped, or reconnecting gave up: starting the runner again may mend these.
RESTARTABLE = ("link_lost", "link_timeout", "reconnect_failed")


@dataclass
class Failure:
    problem: str
    fix: str
    code: str = "error"
    action: str = ""          # a button the dialog offers (RESTART_RUNNER), or none

    def to_dict(self) -> dict:
        # What a run records: the action is the window's business, not the session's.
        return {"problem": self.problem, "fix": self.fix, "code": self.code}


def failure_of(exc: BaseException) -> Failure:
    if isinstance(exc, WhisperKVError):
        code = getattr(exc, "code", "error")
        return Failure(exc.problem, exc.fix or "try again; if it keeps failing, report it with the session JSON",
                       code, RESTART_RUNNER if code in RESTARTABLE else "")
    if isinstance(exc, MemoryError):
        return Failure("out of memory", "close other programs or use shorter audio", "memory")
    # Anything else is a bug: name it plainly instead of showing a traceback.
    return Failure(f"unexpected {type(exc).__name__}: {exc}",
                   "try again; if it keeps failing, export the session JSON and report it", "internal")
