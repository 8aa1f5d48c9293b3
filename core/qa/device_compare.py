"""The cross-device view: every device's clips against the first device's (the first --device given)."""
from __future__ import annotations

from dataclasses import dataclass

DEVICE_ROW_COLUMNS = ("tokens", "Δ error", "latency ×")


@dataclass(frozen=True)
class DeviceRow:
    name: str
    device: str                      # compared with the first device
    reference_device: str
    tokens_identical: bool | None    # None: one side has no decode of this clip
    error_delta: float | None        # this device's WER/CER minus the first device's
    latency_ratio: float | None      # this device's p50 ms/token over the first device's

    def cells(self) -> tuple[str, str, str]:
        """DEVICE_ROW_COLUMNS as text."""
        same = {True: "identical", False: "differ", None: "-"}[self.tokens_identical]
        delta = "-" if self.error_delta is None else f"{self.error_delta:+.3f}"
        ratio = "-" if self.latency_ratio is None else f"{self.latency_ratio:.2f}"
        return same, delta, ratio


def compare_clips(a, b) -> tuple[bool | None, float | None, float | None]:
    """(tokens identical, error delta, latency ratio) of ClipResult b against ClipResult a."""
    if a is None or b is None or a.error or b.error:
        return None, None, None
    delta = None if a.error_rate is None or b.error_rate is None else round(b.error_rate - a.error_rate, 4)
    ratio = None
    if a.per_token_ms_p50 and b.per_token_ms_p50 is not None:
        ratio = round(b.per_token_ms_p50 / a.per_token_ms_p50, 3)
    return a.token_ids == b.token_ids, delta, ratio


def compare_devices(runs) -> list[DeviceRow]:
    """One row per clip per device after the first (core.qa.farm.DeviceRun); empty with one device."""
    if len(runs) < 2:
        return []
    first = runs[0]
    by_name = [{r.name: r for r in run.result.results} for run in runs]
    names = list(dict.fromkeys(name for clips in by_name for name in clips))
    return [DeviceRow(name, run.device, first.device, *compare_clips(by_name[0].get(name), clips.get(name)))
            for name in names for run, clips in zip(runs[1:], by_name[1:])]
