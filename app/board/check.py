"""Check board: `whisperkv doctor`'s ladder (device/link/doctor/ladder.py) for the device panel's profile, run on
a background thread; each rung is reported as it is decided (its index and status, through the task's progress
signal) and the report comes back whole at the end."""
from __future__ import annotations

from typing import Callable

from app.board.link import make_transport
from device.link.doctor.ladder import NAMES, STATUSES, Checkup, RungResult, examine
from device.link.profile import DeviceProfile


def check_board(profile: DeviceProfile, password: str = "",
                progress: Callable[[int, int], None] | None = None) -> dict:
    """The doctor's report for the profile's runner (its deployed model), the quick clip only, with each rung's
    line (`lines`) as the CLI prints it."""
    lines: list[str] = []

    def heard(result: RungResult) -> None:
        lines.append(result.line())
        if progress is not None:
            progress(NAMES.index(result.name), STATUSES.index(result.status))

    checkup = Checkup(profile.runner_target(password, "lean"), quick=True,
                      open_transport=lambda: make_transport(profile, password))
    return examine(checkup, heard) | {"lines": lines}


def rung_line(index: int, status: int) -> str:
    """What the panel shows while the ladder climbs: the rung just decided and its mark."""
    from device.link.doctor.ladder import MARKS

    return f"{MARKS[STATUSES[status]]} {NAMES[index]}"
