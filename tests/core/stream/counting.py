"""A pass decoder over a real runner that records each request's frame count: how many passes ran."""
from __future__ import annotations

from device.link.decoder import RunnerDecoder


def counting_decoder(client) -> tuple:
    """(decode_one, calls): `calls` gains a request's n_frames each time a pass is decoded."""
    calls: list[int] = []
    real = RunnerDecoder(client).window

    def counting(mel, options, n_frames):
        calls.append(n_frames)
        return real(mel, options, n_frames)

    return counting, calls
