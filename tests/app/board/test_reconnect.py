"""The reconnect rule on its own: which failures are retried, the backoff between attempts, giving up, and
a Stop during the wait. The connect attempts are functions here; tests/app/work/test_reconnect_ssh.py runs it for
real."""
from __future__ import annotations

import pytest

from app.board.reconnect import BACKOFF_S, ReconnectFailed, reconnect
from app.errors import RESTART_RUNNER, failure_of
from device.link.host_keys import HostKeyError
from device.link.transport import LinkLost, TransportError


class Attempts:
    """connect() failing with the given errors in turn, then answering "up"; waits are recorded, not slept."""

    def __init__(self, *errors, stop_after_waits: int | None = None):
        self.errors, self.calls, self.waits, self.stop_after = list(errors), 0, [], stop_after_waits

    def connect(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "up"

    def wait(self, delay: float) -> bool:
        self.waits.append(delay)
        return self.stop_after is not None and len(self.waits) >= self.stop_after


def down() -> TransportError:
    return TransportError("cannot connect to ssh://root@board: Connection refused", "check that sshd runs")


def test_a_passing_failure_is_retried_after_each_backoff():
    a = Attempts(down(), LinkLost("the link closed"))
    assert reconnect(a.connect, a.wait, "ssh://board") == "up"
    assert a.calls == 3 and a.waits == list(BACKOFF_S[:2])


def test_it_gives_up_after_the_last_backoff_naming_the_last_error():
    a = Attempts(*[down() for _ in range(len(BACKOFF_S) + 1)])
    with pytest.raises(ReconnectFailed) as err:
        reconnect(a.connect, a.wait, "ssh://board")
    assert a.waits == list(BACKOFF_S) and a.calls == len(BACKOFF_S) + 1
    assert "could not reconnect to ssh://board" in err.value.problem and "Connection refused" in err.value.problem
    assert "check that sshd runs" in err.value.fix and failure_of(err.value).action == RESTART_RUNNER


def test_a_refused_host_key_is_never_retried():
    a = Attempts(HostKeyError("the host key of board CHANGED", "ssh-keygen -R board"))
    with pytest.raises(HostKeyError):
        reconnect(a.connect, a.wait, "ssh://board")
    assert a.calls == 1 and a.waits == [] and failure_of(HostKeyError("x")).action == ""


def test_stop_during_the_wait_ends_the_attempts():
    a = Attempts(down(), down(), stop_after_waits=1)
    with pytest.raises(ReconnectFailed, match="stopped while reconnecting"):
        reconnect(a.connect, a.wait, "ssh://board")
    assert a.calls == 1
