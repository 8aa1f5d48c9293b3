"""A clip's cross-attention for its report, compactly: per decode step, the cells of 0.1 s where the mean of
the alignment heads (scaled to the step's peak) is at least MIN_LEVEL, as [column, level 0-100, ...]. A step
looks at one place, so a row keeps a handful of cells, and the report's JSON stays small."""
from __future__ import annotations

import math

import numpy as np

from core.decode.attention_focus import POSITIONS_PER_S, audio_positions, focus_seconds, step_profile

BIN_S = 0.1
MIN_LEVEL = 15            # percent of the row's peak


def attention_map(steps: list, offsets: dict[int, float], reasons: dict[int, str],
                  duration_s: float | None = None) -> dict | None:
    """`steps`: TokenEvents in order; `offsets`/`reasons`: each window's start in the audio and stop reason;
    `duration_s`: the audio's (rows are scaled to their peak within it, core.decode.attention_focus).
    None when no step carries attention. `marks` holds where each window's last step looked."""
    per_bin = round(BIN_S * POSITIONS_PER_S)
    rows, marks, n_bins = [], [], 0
    for i, ev in enumerate(steps):
        if ev.attention is None:
            rows.append([])
            continue
        offset = offsets.get(ev.window, 0.0)
        profile = step_profile(ev.attention, audio_positions(duration_s, offset))
        levels = np.pad(profile, (0, -len(profile) % per_bin)).reshape(-1, per_bin).max(axis=1)
        first = round(offset / BIN_S)
        n_bins = max(n_bins, first + len(levels))
        row = []
        for col in np.flatnonzero(levels * 100 >= MIN_LEVEL):
            row += [int(first + col), round(float(levels[col]) * 100)]
        rows.append(row)
        last = i + 1 == len(steps) or steps[i + 1].window != ev.window
        if last:
            what = "EOT" if reasons.get(ev.window) == "eot" else f"last step ({reasons.get(ev.window, '')})"
            marks.append([i, round(focus_seconds(ev.attention, offset, duration_s=duration_s), 2), what])
    if not any(rows):
        return None
    return {"bin_s": BIN_S, "n_bins": n_bins, "rows": rows, "marks": marks}


def cells(row: list[int]) -> list[tuple[int, int]]:
    """(column, level) pairs of one stored row."""
    return list(zip(row[::2], row[1::2]))


def merged_rows(rows: list[list[int]], max_rows: int) -> tuple[list[dict[int, int]], int]:
    """Neighbouring steps merged (their max) so at most `max_rows` remain: (rows as column → level, steps per row)."""
    group = max(1, math.ceil(len(rows) / max_rows))
    out = []
    for g in range(0, len(rows), group):
        merged: dict[int, int] = {}
        for row in rows[g:g + group]:
            for col, level in cells(row):
                merged[col] = max(level, merged.get(col, 0))
        out.append(merged)
    return out, group
