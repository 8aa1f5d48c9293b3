"""One QA report over one or several devices: each device's SuiteResult, the cross-device view and,
with a baseline, each clip's marks. The JSON, CSV and HTML writers all read this."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from core.qa.board_cost import device_cost
from core.qa.device_compare import DeviceRow, compare_devices
from core.qa.run import ClipResult, SuiteResult


@dataclass
class DeviceRun:
    device: str                  # the --device URL as typed: the key a baseline's clips are matched by
    result: SuiteResult
    error: str = ""              # the device failed (unreachable, runner died); `result` keeps its clips so far

    @property
    def passed(self) -> bool:
        return not self.error and self.result.passed

    def to_dict(self) -> dict:
        r = self.result
        return {"device": self.device, "error": self.error, "passed": self.passed, "n_clips": len(r.results),
                "n_passed": r.n_passed, "meta": r.meta, "board": self.board}

    @property
    def board(self) -> dict | None:
        """What the run cost the device: peak memory and temperature, the clips that ran hot."""
        return device_cost(self.result.results)


@dataclass
class QAReport:
    suite: str
    path: str
    runs: list[DeviceRun]
    meta: dict = field(default_factory=dict)          # what all devices share: cache, date, total time
    baseline: dict | None = None                      # path, fail_on, the slower rule (core.qa.baseline)
    comparisons: dict = field(default_factory=dict)   # (device, clip name) → baseline.Comparison

    @classmethod
    def single(cls, result: SuiteResult) -> QAReport:
        """A one-device report around a SuiteResult (the GUI's QA tab, older callers)."""
        return cls(result.suite, result.path, [DeviceRun(str(result.meta.get("device", "")), result)])

    @property
    def multi(self) -> bool:
        return len(self.runs) > 1

    @property
    def device_rows(self) -> list[DeviceRow]:
        return compare_devices(self.runs)

    def comparison(self, device: str, name: str):
        return self.comparisons.get((device, name))

    def failing_marks(self) -> list[tuple[str, str, str]]:
        """(device, clip, mark) for every baseline mark that fails the run (--fail-on)."""
        fail_on = (self.baseline or {}).get("fail_on", ())
        return [(d, n, m) for (d, n), c in self.comparisons.items() for m in c.marks if m in fail_on]

    @property
    def passed(self) -> bool:
        return bool(self.runs) and all(run.passed for run in self.runs) and not self.failing_marks()

    def clips(self) -> list[tuple[DeviceRun, ClipResult]]:
        return [(run, r) for run in self.runs for r in run.result.results]

    def clip_names(self) -> list[str]:
        """Every clip name once, in suite order (a device that failed early has fewer)."""
        names: dict[str, None] = {}
        for run in sorted(self.runs, key=lambda run: -len(run.result.results)):
            names.update((r.name, None) for r in run.result.results)
        return list(names)

    def to_dict(self) -> dict:
        meta = (self.runs[0].result.meta if not self.multi else {"devices": [r.device for r in self.runs]})
        clips = [r.to_dict() | {"device": run.device, "baseline": _asdict(self.comparison(run.device, r.name))}
                 for run, r in self.clips()]
        return {"suite": self.suite, "path": self.path, "passed": self.passed, "n_clips": len(clips),
                "n_passed": sum(c["passed"] for c in clips), "meta": meta | self.meta,
                "devices": [run.to_dict() for run in self.runs], "clips": clips,
                "cross": [asdict(row) for row in self.device_rows],    # the JSON key readers know
                "baseline": self.baseline}


def _asdict(comparison) -> dict | None:
    return None if comparison is None else asdict(comparison)
