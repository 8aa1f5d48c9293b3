"""Runners that die on cue, for the studio's dead-runner tests: the real client and transports, with the
runner (or the whole SSH server) killed right after a given step's token reached the host."""
from __future__ import annotations

import time
from collections.abc import Callable

from core.decode.events import TokenEvent
from device.link.client import BoardClient
from device.link.decoder import RunnerDecoder
from device.link.local import LocalTransport

KILL_AFTER_STEP = 2


class KeepStreamTransport(LocalTransport):
    """The real local transport, keeping hold of the runner process so a test can kill it."""

    def start_runner(self, args):
        self.stream = super().start_runner(args)
        return self.stream


def kill_local_runner(client: BoardClient) -> None:
    client.transport.stream.proc.kill()          # SIGKILL, as the OOM killer would


class KilledAfterStep(BoardClient):
    """The real client; right after handing over the step-KILL_AFTER_STEP token it calls kill(self), once."""

    def __init__(self, transport, kill: Callable[[BoardClient], None] | None, **kw):
        super().__init__(transport, **kw)
        self.kill = kill

    def transcribe(self, mel, options=None, **kw):
        for arrival in super().transcribe(mel, options, **kw):
            yield arrival
            if self.kill and isinstance(arrival.event, TokenEvent) and arrival.event.step == KILL_AFTER_STEP:
                kill, self.kill = self.kill, None
                kill(self)


class DiesOnce:
    """A TranscribeWorker decoder factory: the first runner dies on cue, the later ones live. `calls` holds
    the time.monotonic() of every call (one per connect attempt) and `clients` the clients under the decoders."""

    def __init__(self, make_transport: Callable, kill: Callable[[BoardClient], None], **client_kw):
        self.make_transport, self.kill, self.client_kw = make_transport, kill, client_kw
        self.calls: list[float] = []
        self.clients: list[BoardClient] = []

    def __call__(self, profile, password):
        self.calls.append(time.monotonic())
        client = KilledAfterStep(self.make_transport(profile), self.kill if not self.clients else None,
                                 **self.client_kw)
        self.clients.append(client)
        return RunnerDecoder(client)
