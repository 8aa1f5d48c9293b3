"""Reconnecting after a lost link: a few attempts with a short backoff, because what broke it often passes
(sshd restarting, a board rebooting, a cable replugged). A refused host key or login is never retried:
waiting does not mend those. Qt-free; the decode worker calls it on its own thread."""
from __future__ import annotations

import time
from typing import Callable, TypeVar

from core.errors import WhisperKVError

BACKOFF_S = (0.5, 1.0, 2.0)                  # the waits between attempts; then give up
RETRYABLE = ("transport", "link_lost", "link_timeout")

T = TypeVar("T")


class ReconnectFailed(WhisperKVError):
    code = "reconnect_failed"


def reconnect(connect: Callable[[], T], wait: Callable[[float], bool], where: str,
              delays: tuple[float, ...] = BACKOFF_S) -> T:
    """connect() until it succeeds. After a failure that may pass, wait(delay) and try again; wait returns
    True when the user stopped, which ends the attempts. Every attempt failed: ReconnectFailed."""
    t0 = time.monotonic()
    attempts = 0
    for delay in (*delays, None):
        attempts += 1
        try:
            return connect()
        except WhisperKVError as exc:
            if getattr(exc, "code", "") not in RETRYABLE:
                raise
            last = exc
        if delay is None:
            break
        if wait(delay):
            raise ReconnectFailed(f"stopped while reconnecting to {where}: {last.problem}",
                                  "press Transcribe to try again, or Restart runner") from last
    raise ReconnectFailed(
        f"could not reconnect to {where}: {attempts} attempts over {time.monotonic() - t0:.1f} s failed; "
        f"the last said: {last.problem}",
        f"{last.fix.rstrip('.') + '; then ' if last.fix else ''}press Transcribe again or Restart runner") from last
