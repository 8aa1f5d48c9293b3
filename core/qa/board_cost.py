"""What a QA run cost each board: its clips' `sample` events (docs/protocol.md) reduced to peaks, and the
clips that ran while the board was throttling or hot.

A clip is flagged when a sample taken while it ran shows a thermal zone at or past its passive trip point
(the kernel throttles there) or any zone at HOT_C or more. Its timings were measured on a slowed board
and do not compare with a cool run's.
"""
from __future__ import annotations

# 85 C: the passive trip point of many Arm SoCs' CPU zones, and where the board in a box puts its own.
# A board whose zones report their trip points is judged by those first (`throttling`).
HOT_C = 85.0


def clip_cost(samples: list[dict]) -> dict | None:
    """One clip's samples -> {samples, cpu_s, peak_rss_mb, min_mem_available_mb, peak_temp_c, throttled, hot,
    flag}; None when the runner sent none (a local runner predating samples, or in-process)."""
    if not samples:
        return None
    rss = [s["rss_mb"] for s in samples if s.get("rss_mb") is not None]
    avail = [s["mem_available_mb"] for s in samples if s.get("mem_available_mb") is not None]
    temps = [z["temp_c"] for s in samples for z in s.get("zones") or [] if z.get("temp_c") is not None]
    cpu = [s["cpu_s"] for s in samples if s.get("cpu_s") is not None]
    peak = max(temps) if temps else None
    throttled = any(s.get("throttling") for s in samples)
    hot = peak is not None and peak >= HOT_C
    flag = ("ran while the board was throttling" if throttled else
            f"ran at {peak:.1f} C (>= {HOT_C:.0f} C)" if hot else "")
    return {"samples": len(samples), "cpu_s": round(cpu[-1] - cpu[0], 3) if len(cpu) > 1 else 0.0,
            "peak_rss_mb": max(rss) if rss else None, "min_mem_available_mb": min(avail) if avail else None,
            "peak_temp_c": peak, "throttled": throttled, "hot": hot, "flag": flag}


def device_cost(clips) -> dict | None:
    """A device's clips (ClipResult with .board) -> its peaks and the names of the flagged clips."""
    costs = [(c.name, c.board) for c in clips if c.board]
    if not costs:
        return None

    def peak(key, pick=max):
        values = [b[key] for _, b in costs if b.get(key) is not None]
        return pick(values) if values else None

    return {"peak_rss_mb": peak("peak_rss_mb"), "min_mem_available_mb": peak("min_mem_available_mb", min),
            "peak_temp_c": peak("peak_temp_c"), "flagged": [name for name, b in costs if b.get("flag")]}


def describe(cost: dict | None) -> str:
    """One line for the CLI and the report: 'peak RSS 310 MB, available memory down to 1200 MB, peak 91.0 C;
    flagged: a, b'."""
    if not cost:
        return "no board samples (a runner that predates them, or in-process)"
    fmt = lambda v, spec, unit: "?" if v is None else f"{v:{spec}}{unit}"  # noqa: E731
    line = (f"peak runner RSS {fmt(cost['peak_rss_mb'], '.0f', ' MB')}, available memory down to "
            f"{fmt(cost['min_mem_available_mb'], '.0f', ' MB')}, "
            f"peak temperature {fmt(cost['peak_temp_c'], '.1f', ' C')}")
    return line + (f"; ran hot or throttled: {', '.join(cost['flagged'])}" if cost["flagged"] else "")
