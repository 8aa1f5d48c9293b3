"""Check board: `whisperkv doctor`'s ladder (device/doctor/ladder.py) for the device panel's profile, the quick
clip only, on the runner's deployed model (or the profile's bundle). Blocking: the check worker
(app/work/check_worker.py) climbs it on the decode worker's thread; each rung is reported as it is decided (its
index in the ladder and its status) and the report comes back whole at the end."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.board.link import make_transport
from device.doctor.checkup import STATUSES, Checkup
from device.doctor.ladder import RungResult, examine
from device.link.profile import DeviceProfile
from device.link.target import Target


def board_checkup(profile: DeviceProfile, password: str = "") -> Checkup:
    """The doctor's checkup of the profile's runner, its transport opened by the reach rung: with the profile's
    bundle when it names one on this PC, else against what deploy recorded on the board. The Neuron profiler (for
    the placement rung) only when the profile's own NPU profile setting is on, as `whisperkv doctor --npu-profile`."""
    target = profile.runner_target(password, "lean")
    return Checkup(target, profile_bundle(target), quick=True, open_transport=lambda: make_transport(profile, password),
                   npu_profile=bool(target.npu_profile))


def profile_bundle(target: Target) -> Path | None:
    """The exported bundle the profile's model names, when its runner is this PC's (a board's model is its own)."""
    if target.url is None or target.url.scheme != "local" or not target.model:
        return None
    folder = Path(target.model).expanduser()
    return folder.resolve() if (folder / "model.json").is_file() else None


def check_board(checkup: Checkup, progress: Callable[[int, int], None] | None = None) -> dict:
    """The doctor's report, with each rung's line (`lines`) as the CLI prints it, the clips' runs (`runs`, for
    doctor.html) and the board's logs (`logs`: the runner's stderr, on Android logcat's Neuron lines)."""
    lines: list[str] = []

    def heard(result: RungResult) -> None:      # the climb hears every rung in ladder order, not-run ones too
        lines.append(result.line())
        if progress is not None:
            progress(len(lines) - 1, STATUSES.index(result.status))

    return examine(checkup, heard, logs=True) | {"lines": lines, "runs": checkup.runs, "logs": checkup.logs}
