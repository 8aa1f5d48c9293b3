"""What every rung of the doctor's ladder shares: the Checkup a rung reads and fills, the Verdict it returns, the
marks, and the Rung row of the ladder's table (ladder.py). A leaf: it imports no other module of the doctor, so a
rung module imports it and the ladder imports the rung modules, with no way round back.

A rung's check returns a Verdict. What only a real board can show (speed, placement) is reported with `board_only`:
a fail on a board, a warning with the reason on a runner that is this PC, an emulation or a stand-in runtime. What
no public record confirms (an SoC the table lacks, /dev/apusys*, the compiler's and the runtime's versions) warns
everywhere and names its source; the loads rung decides. Only a load, a run or a number that fails stops the ladder.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from core.errors import WhisperKVError

if TYPE_CHECKING:   # for the reader and the editor only: at run time the leaf needs nothing of the link
    from device.link.target import Target
    from device.link.transport import Transport

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

    target: Target
    bundle: Path | None = None       # the bundle on this PC (--model)
    quick: bool = False
    transport: Transport | None = None  # opened by reach
    board: dict = field(default_factory=dict)     # identity's probe of the board (board_probe.py)
    decoder: object | None = None    # a device.link.decoder.RunnerDecoder, connected by loads
    runs: dict = field(default_factory=dict)      # clip -> {"board": {...}, "pc": {...}} (tokens, speed)
    open_transport: Callable | None = None        # the CLI's (asks on a terminal); default device/link/connect.py
    deployment: object | None = None  # what deploy recorded on the board, its model.json (deployment.py)
    # The Neuron runtime's profiler for the placement rung (--npu-profile; the studio: the profile's own setting).
    # Off by default: a profiled runner re-creates its runtimes after every request (served_model.py), and the
    # speed rung never times one.
    npu_profile: bool = False
    logs: dict = field(default_factory=dict)      # file name -> text kept beside the report (board_logs.py)

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
    """One row of the ladder's table (ladder.py's RUNGS)."""

    name: str
    checks: str                              # what it checks, in words (docs, --help, the studio's hover)
    check: Callable[[Checkup], Verdict]      # the rung itself, named by reference
    board_must_show: str                     # what a real board must show to pass
