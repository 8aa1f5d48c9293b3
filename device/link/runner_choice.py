"""Which runner a device starts, and its command line: the Python runner (`python -m device.runner`) or the native
one (the runner in C, device/native_runner/). The URL's ?runner= says; else the deploy record in the runner's folder
names the runner deploy left there (it ships the native one where the board has no Python the runner can use); else
the Python runner.

Deployed, the native runner is DIR/bin/whisperkv-runner beside the bundle, DIR/model/: it looks for `model/` in the
parent of its executable's folder. It takes the settings rows' runner flags (the spec's C header) and --model, and
stops with exit status 2 at any other, so the Python runner's own flags (--encoder-cache-mb, --log-level, ...) are
left out of its command line. On Android it starts with LD_LIBRARY_PATH set to the vendor folders
(device/link/android.py): deploy's record says the board is Android (`android`, its release), else the transport asks
once."""
from __future__ import annotations

from device.link import android
from device.link.transport import Transport, read_json
from device.spec.settings import RUNNERS, SETTINGS

PYTHON, NATIVE = RUNNERS
RECORD = "manifest.json"              # deploy's record in the runner's folder (device/deploy/deploy_record.py)
NATIVE_EXE = "bin/whisperkv-runner"   # the native runner under the runner's folder, as deploy lays it out


def native_args(args: list[str]) -> list[str]:
    """The runner flags the native runner takes, with their values; any other flag is left out with its value
    (the next word, unless it is a flag or the flag is written --name=value)."""
    known = {s.flag: s for s in SETTINGS if s.runner}
    out, i = [], 0
    while i < len(args):
        flag, inline = args[i].partition("=")[0], "=" in args[i]
        s = known.get(flag)
        if inline or (s is not None and s.kind == "flag"):
            takes = 0
        elif s is not None:
            takes = 1
        else:
            takes = 1 if i + 1 < len(args) and not args[i + 1].startswith("--") else 0
        if s is not None:
            out += args[i:i + 1 + takes]
        i += 1 + takes
    return out


def recorded(transport: Transport) -> dict:
    """Deploy's record in the runner's folder ({}: none there)."""
    return read_json(transport, RECORD, cwd=transport.runner_dir) or {}


def recorded_runner(record: dict) -> str | None:
    """The runner deploy's record names (None: no record, or one older than the field)."""
    runner = record.get("runner")
    return runner if runner in RUNNERS else None


def chosen_runner(transport: Transport, asked: str | None, deployed: bool = True, record: dict | None = None) -> str:
    """The runner to start: the one asked for (?runner=), else a deployed folder's record's, else python."""
    if asked:
        return asked.lower()
    if record is None and deployed:
        record = recorded(transport)
    return recorded_runner(record or {}) or PYTHON


def on_android(transport: Transport, record: dict) -> bool:
    """The board runs Android: as deploy recorded it (`android`: its release, None off Android), else as the
    transport finds (asked once a transport)."""
    return bool(record["android"] if "android" in record else transport.android())


def runner_argv(transport: Transport, args: list[str], asked: str | None, deployed: bool = True,
                native_exe: str = NATIVE_EXE) -> list[str]:
    """The command that starts the chosen runner in the runner's folder, with the flags it takes; the native one on
    Android with the vendor folders' library path."""
    record = recorded(transport) if deployed and not asked else {}
    if chosen_runner(transport, asked, deployed, record) == NATIVE:
        return [*android.runner_env(on_android(transport, record)), native_exe, *native_args(args)]
    return [transport.python, "-m", "device.runner", *args]
