"""The doctor's ladder: one table of rungs, climbed in order from "can I reach the board" to "the NPU gives the
PC's tokens at the seed's speed", stopping at the first that fails (the later ones are not run) and keeping what
every rung before it measured (docs/doctor.md). Each row names its rung's function by reference; what the rungs
share is checkup.py's, so that no rung module imports this one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from core.errors import WhisperKVError
from device.doctor import deployment, rungs_board, rungs_run
from device.doctor.board_logs import board_logs
from device.doctor.checkup import (  # noqa: F401  (STATUSES: tests/app/board/test_check_view.py reads it here)
    MARKS,
    STATUSES,
    CannotRun,
    Checkup,
    Rung,
    Verdict,
)

RUNGS = (
    Rung("reach", check=rungs_board.reach, checks="the link opens (SSH or adb); an unknown host key is named with "
         "the way to trust it", board_must_show="a shell answers"),
    Rung("identity", check=rungs_board.identity, checks="SoC and NPU generation, OS image (Linux, or Android: its "
         "release, platform and ABI), kernel, cores, memory, thermal zones; the runner it gets (native without a "
         "Python the runner can use); the bundle's SoC against the board's",
         board_must_show="an MT8371 (MDLA 5.3) on a Linux or Android image"),
    Rung("runtime", check=rungs_board.runtime, checks="Python and the backend's packages; for dla the Neuron library "
         "(path, version, API; for the native runner its file) and /dev/apusys*; the .dla's compiler against the "
         "runtime",
         board_must_show="MediaTek's runtime library with the V1 or V2 API, and /dev/apusys*"),
    Rung("deployed", check=deployment.deployed, checks="the runner on the board against this PC's, and every model "
         "file against what deploy recorded there (with --model: against this PC's bundle too), by sha256",
         board_must_show="every file deployed and unchanged"),
    Rung("loads", check=rungs_run.loads, checks="each graph loads (the runtime's create), with the load time; the "
         "runner's hello", board_must_show="hello from the runner"),
    Rung("numbers", check=rungs_run.numbers, checks="test_en.wav's first window: the encoder's outputs and the first "
         "step's logits against the PC's NumPy reference", board_must_show="every output within its arithmetic's "
         "bounds"),
    Rung("tokens", check=rungs_run.tokens, checks="test_en.wav and test_zh.wav (--quick: the hello-world clip) "
         "decode to the PC's reference tokens", board_must_show="the reference tokens"),
    Rung("speed", check=rungs_run.speed, checks="on warm runtimes with the profiler off (the runner's first window "
         "not timed): encoder ms a window, first-token ms, median ms a token, against the seed's targets, and a V1 "
         "runtime's native and converted paths side by side; peak memory, temperature, throttling",
         board_must_show="encoder < 150 ms, < 15 ms a token"),
    Rung("placement", check=rungs_run.placement, checks="where each graph ran, from what the backend reports and, "
         "with --npu-profile, the Neuron runtime profiler's report", board_must_show="every graph on the NPU"),
)
NAMES = tuple(r.name for r in RUNGS)


@dataclass
class RungResult:
    name: str
    status: str
    figures: dict
    fix: str | None = None
    notes: list[str] = field(default_factory=list)
    decided_by: str = ""

    def line(self) -> str:
        """How the CLI and the studio show it: the mark, the rung, what decided it, its warnings, and the fix."""
        text = f"{MARKS[self.status]} {self.name:9} {self.decided_by}".rstrip()
        for note in self.notes:
            text += f"\n    ! {note}"
        if self.status == "fail" and self.fix:
            text += f"\n    fix: {self.fix}"
        return text

    def to_dict(self) -> dict:
        """The report's form: what decided the rung and its warnings are figures too."""
        extra = {"decided_by": self.decided_by} if self.decided_by else {}
        return {"name": self.name, "status": self.status,
                "figures": self.figures | extra | ({"warnings": self.notes} if self.notes else {}), "fix": self.fix}


BUG_FIX = ("a bug in the doctor: write doctor.html (`whisperkv doctor --device URL --out DIR`, or the studio's "
           "Write doctor.html…) and send it with the bug")


def climb(checkup: Checkup, on_rung: Callable[[RungResult], None] | None = None,
          rungs: tuple[Rung, ...] | None = None) -> list[RungResult]:
    """Every rung's result in ladder order (RUNGS, read when called); `on_rung` hears each as it is decided (the
    CLI's lines, the studio's)."""
    results: list[RungResult] = []
    failed = False
    for rung in RUNGS if rungs is None else rungs:
        if failed:
            result = RungResult(rung.name, "not-run", {})
        else:
            try:
                v = rung.check(checkup)
            except CannotRun:
                raise
            except WhisperKVError as exc:     # a check's own failure, with its fix
                v = Verdict().fail(exc.problem, exc.fix or "")
            except Exception as exc:          # a bug: one line naming it, and the ladder stops there
                first = (str(exc).strip().splitlines() or [""])[0]
                v = Verdict().fail(f"the {rung.name} rung failed unexpectedly ({type(exc).__name__}: {first})",
                                   BUG_FIX)
            result = RungResult(rung.name, v.status, v.figures, v.fix, v.notes, v.decided_by)
            failed = v.status == "fail"
        results.append(result)
        if on_rung is not None:
            on_rung(result)
    return results


def examine(checkup: Checkup, on_rung: Callable[[RungResult], None] | None = None, logs: bool = False) -> dict:
    """Climb, close what the rungs opened, and return the report (the CLI's --json): the device, the bundle, and
    every rung in ladder order. `logs`: keep the board's logs in `checkup.logs` first (board_logs.py)."""
    try:
        results = climb(checkup, on_rung)
        if logs:
            checkup.logs = board_logs(checkup)
    finally:
        release(checkup)
    return {"device": checkup.target.label, "bundle": str(checkup.bundle) if checkup.bundle else None,
            "rungs": [r.to_dict() for r in results]}


def release(checkup: Checkup) -> None:
    """Close what the rungs opened (the runner, the link); from another thread, this ends a rung waiting on them."""
    for thing in (checkup.decoder, checkup.transport):
        try:
            if thing is not None:
                thing.close()
        except Exception:      # closing a dead link is not worth an error
            pass
