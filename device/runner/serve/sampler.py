"""What a request costs the board, sampled while it runs: the runner's CPU time and resident memory, the
board's available memory and every thermal zone's temperature (docs/protocol.md, `sample`).

Stdlib only, read from procfs and sysfs once a `sample_s`; a file a board lacks is left out, never guessed.
A zone is throttling when its temperature has reached one of its passive trip points (the kernel's
thermal framework starts cooling there).
"""
from __future__ import annotations

import glob
import os
import threading
import time
from typing import Callable

THERMAL = "/sys/class/thermal"
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except (OSError, ValueError):
        return None


def _millideg(text: str | None) -> float | None:
    try:
        return round(int(text) / 1000, 1) if text is not None else None
    except ValueError:
        return None


def thermal_zones(root: str | None = None) -> list[dict]:
    """[{zone, type, temp_c, passive_c}] for each readable zone; passive_c is its lowest passive trip point."""
    zones = []
    found = glob.glob(os.path.join(root or THERMAL, "thermal_zone*"))
    for d in sorted(found, key=lambda p: int(p.rsplit("zone", 1)[1])):
        temp = _millideg(_read(os.path.join(d, "temp")))
        if temp is None:
            continue
        passive = [_millideg(_read(t[:-len("_type")] + "_temp"))
                   for t in glob.glob(os.path.join(d, "trip_point_*_type")) if _read(t) == "passive"]
        passive = [p for p in passive if p is not None]
        zones.append({"zone": os.path.basename(d), "type": _read(os.path.join(d, "type")) or "", "temp_c": temp,
                      "passive_c": min(passive) if passive else None})
    return zones


def mem_available_mb() -> float | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def rss_mb() -> float | None:
    statm = _read("/proc/self/statm")
    return round(int(statm.split()[1]) * PAGE / 2**20, 1) if statm else None


def sample(t0: float) -> dict:
    zones = thermal_zones()
    return {"type": "sample", "t_s": round(time.monotonic() - t0, 3), "cpu_s": round(time.process_time(), 3),
            "rss_mb": rss_mb(), "mem_available_mb": mem_available_mb(), "zones": zones,
            "throttling": any(z["passive_c"] is not None and z["temp_c"] >= z["passive_c"] for z in zones)}


class Sampler:
    """Sampler(1.0, send).start() sends a sample at once, then every interval until close() (idempotent), after
    which it sends nothing: the runner closes it before a request's last event."""

    def __init__(self, interval_s: float, send: Callable[[dict], None]):
        self.interval = interval_s
        self.send = send
        self.stop = threading.Event()
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._loop, name="sampler", daemon=True)

    def _loop(self) -> None:
        while True:
            self.send(sample(self.t0))
            if self.stop.wait(self.interval):
                return

    def start(self) -> "Sampler":
        self.thread.start()
        return self

    def close(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
