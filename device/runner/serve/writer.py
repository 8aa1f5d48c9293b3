"""The runner's outgoing side of docs/protocol.md: headers as strict JSON, whole frames from any thread."""
from __future__ import annotations

import json
import math
import os
import threading
import time
from typing import Callable

from device import protocol as P


def _json_default(o):
    if hasattr(o, "item"):       # NumPy scalar
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _finite(o):
    """JSON has no NaN/Inf, and a C++ host may refuse them: send null instead."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def dumps(header: dict) -> bytes:
    try:
        return json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                          default=_json_default).encode()
    except ValueError:
        return json.dumps(_finite(json.loads(json.dumps(header, default=_json_default))),
                          separators=(",", ":"), ensure_ascii=False).encode()


class Writer:
    """Whole frames only, from any thread. Once a write fails the host is gone (stdout is this runner's
    only way to answer it): `on_broken` runs once, and later frames are dropped."""

    def __init__(self, fd: int, on_broken: Callable[[], None] = lambda: None):
        self.fd = fd
        self.on_broken = on_broken
        self.lock = threading.Lock()
        self.broken = False

    def send(self, header: dict) -> None:
        with self.lock:
            if self.broken:
                return
            # The runner's monotonic clock at write time: on the same host as the client (local, loopback
            # SSH) it is the host's clock too, so arrival minus sent_t is the link's one-way latency.
            raw = dumps({**header, "sent_t": round(time.monotonic(), 6)})
            data = P._LEN.pack(len(raw)) + raw
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view):]
                return
            except OSError:
                self.broken = True
        self.on_broken()
