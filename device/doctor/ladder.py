"""The doctor's ladder: one table of rungs, climbed in order from "can I reach the board" to "the NPU gives the
PC's tokens at the seed's speed", stopping at the first that fails (the later ones are not run) and keeping what
every rung before it measured (docs/doctor.md).

A rung's check returns a Verdict. What only a real board can show (speed, placement) is reported with `board_only`:
a fail on a board, a warning with the reason on a runner that is this PC, an emulation or a stand-in runtime. What
no public record confirms (an SoC the table lacks, /dev/apusys*, the compiler's and the runtime's versions) warns
everywhere and names its source; the loads rung decides. Only a load, a run or a number that fails stops the ladder.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from core.errors import WhisperKVError

STATUSES = ("pass", "warn", "fail", "not-run")
MARKS = {"pass": "✔", "warn": "!", "fail": "✘", "not-run": "–"}


class CannotRun(WhisperKVError):
    """The doctor itself cannot go on (no reference for the bundle): exit 2, not a rung's fail."""

    code = "doctor"


@dataclass
class Verdict:
    status: str = "pass"
    figures: dict = field(default_factory=dict)
    fix: str | None = None
    notes: list[str] = field(default_factory=list)     # why a rung warns
    decided_by: str = ""                                # the figure that decided it, in words

    def fail(self, problem: str, fix: str) -> "Verdict":
        self.status, self.decided_by, self.fix = "fail", problem, fix
        return self

    def warn(self, note: str) -> None:
        self.notes.append(note)
        if self.status == "pass":
            self.status = "warn"


@dataclass
class Checkup:
    """One doctor run: what it was asked, and what the rungs learn on the way (each later rung reads it)."""

    target: object                   # device.link.target.Target
    bundle: Path | None = None       # the bundle on this PC (--model)
    quick: bool = False
    transport: object | None = None  # opened by reach
    board: dict = field(default_factory=dict)     # identity's probe of the board (board_probe.py)
    decoder: object | None = None    # a RunnerDecoder, connected by loads
    runs: dict = field(default_factory=dict)      # clip -> {"board": {...}, "pc": {...}} (tokens, speed)
    open_transport: Callable | None = None        # the CLI's (asks on a terminal); default device/link/connect.py
    deployment: object | None = None  # what deploy recorded on the board, its model.json (deployment.py)
    # The Neuron runtime's profiler for the placement rung (--npu-profile; the studio: the profile's own setting).
    # Off by default: a profiled runner re-creates its runtimes after every request (served_model.py), and the
    # speed rung never times one.
    npu_profile: bool = False

    @property
    def kind(self) -> str:
        """What the runner runs on ("pc", "emulated", "board"), and "stand-in" for a board whose Neuron runtime is
        one: hello's `runner_kind` and `npu` once the runner answered, the board probe's before."""
        info = getattr(self.decoder, "info", None)
        raw = info.raw if info is not None else {}
        system = str(raw.get("runner_kind") or self.board.get("runner_kind") or "board")
        npu = raw.get("npu") or (self.board.get("neuron_runtime") or {}).get("kind")
        return "stand-in" if system == "board" and npu == "stand-in" else system

    def board_only(self, verdict: Verdict, problem: str, fix: str) -> Verdict:
        """A check only a real board can pass: a fail there, a warning with the reason anywhere else."""
        if self.kind == "board":
            return verdict.fail(problem, fix)
        verdict.warn(f"{problem[:1].upper()}{problem[1:]}. {expected_here(self.kind)}")
        return verdict


# Why a warning that only a real board can settle is no fault where the runner is not one, in a plain sentence.
WHY = {"pc": "the runner is this PC, not a board", "emulated": "the runner is an emulation of a board, not a board",
       "stand-in": "the board's Neuron runtime is a STAND-IN, not MediaTek's", "board": "the runner is a board"}


def expected_here(kind: str) -> str:
    return f"That is expected and fine here: {WHY[kind]}, and only a real board can show it."


@dataclass(frozen=True)
class Rung:
    name: str
    checks: str          # what it checks, in words (docs, --help)
    check: str           # "module:function"(Checkup) -> Verdict
    board_must_show: str  # what a real board must show to pass


_B, _D, _R = "device.doctor.rungs_board", "device.doctor.deployment", "device.doctor.rungs_run"
RUNGS = (
    Rung("reach", "the link opens (SSH or adb); an unknown host key is named with the way to trust it",
         f"{_B}:reach", "a shell answers"),
    Rung("identity", "SoC and NPU generation, OS image (Linux, not Android), kernel, cores, memory, thermal zones; "
         "the bundle's SoC against the board's", f"{_B}:identity", "an MT8371 (MDLA 5.3) on a Linux image"),
    Rung("runtime", "Python and the backend's packages; for dla the Neuron library (path, version, API) and "
         "/dev/apusys*; the .dla's compiler against the runtime", f"{_B}:runtime",
         "MediaTek's runtime library with the V1 or V2 API, and /dev/apusys*"),
    Rung("deployed", "the runner on the board against this PC's, and every model file against what deploy recorded "
         "there (with --model: against this PC's bundle too), by sha256", f"{_D}:deployed",
         "every file deployed and unchanged"),
    Rung("loads", "each graph loads (the runtime's create), with the load time; the runner's hello",
         f"{_R}:loads", "hello from the runner"),
    Rung("numbers", "test_en.wav's first window: the encoder's outputs and the first step's logits against the "
         "PC's NumPy reference", f"{_R}:numbers", "every output within its arithmetic's bounds"),
    Rung("tokens", "test_en.wav and test_zh.wav (--quick: the hello-world clip) decode to the PC's reference "
         "tokens", f"{_R}:tokens", "the reference tokens"),
    Rung("speed", "on warm runtimes with the profiler off (the runner's first window not timed): encoder ms a "
         "window, first-token ms, median ms a token, against the seed's targets, and a V1 runtime's native and "
         "converted paths side by side; peak memory, temperature, throttling", f"{_R}:speed",
         "encoder < 150 ms, < 15 ms a token"),
    Rung("placement", "where each graph ran, from what the backend reports and, with --npu-profile, the Neuron "
         "runtime profiler's report", f"{_R}:placement",
         "every graph on the NPU"),
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


def _call(spec: str, checkup: Checkup) -> Verdict:
    module, fn = spec.split(":")
    return getattr(importlib.import_module(module), fn)(checkup)


BUG_FIX = ("a bug in the doctor: write doctor.html (`whisperkv doctor --device URL --out DIR`, or the studio's "
           "Write doctor.html…) and send it with the bug")


def climb(checkup: Checkup, on_rung: Callable[[RungResult], None] | None = None,
          rungs: tuple[Rung, ...] = RUNGS) -> list[RungResult]:
    """Every rung's result in ladder order; `on_rung` hears each as it is decided (the CLI's lines, the studio's)."""
    results: list[RungResult] = []
    failed = False
    for rung in rungs:
        if failed:
            result = RungResult(rung.name, "not-run", {})
        else:
            try:
                v = _call(rung.check, checkup)
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


def examine(checkup: Checkup, on_rung: Callable[[RungResult], None] | None = None) -> dict:
    """Climb, close what the rungs opened, and return the report (the CLI's --json): the device, the bundle, and
    every rung in ladder order."""
    try:
        results = climb(checkup, on_rung)
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
