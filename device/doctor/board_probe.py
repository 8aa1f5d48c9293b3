"""What the doctor asks of the board before any runner runs there. First its shell (device/info/shell_probe.py): the
OS image, kernel, cores by type, memory, thermal zones, the SoC (device/spec/soc.py's sources), /dev/apusys*, and
whether the runner's Python is there, so that a board without Python is still named. Then, where that Python is, one
stdlib script run with it (device-info's way) for what only Python can say: its version, what the system is
(device/spec/runner_kind.py) and the Neuron runtime library found (device/spec/neuron_paths.py's probe, as
device-info's) with whether it is a stand-in. The packages are deploy's own probe's
(device/deploy/board_packages.py)."""
from __future__ import annotations

import json
from dataclasses import asdict

from device.info.probe_script import probe_script
from device.info.shell_probe import shell_facts
from device.link.transport import Transport
from device.spec import board_files, neuron_paths, runner_kind

_BODY = r"""
import ctypes, json, platform, sys
ask = json.loads(sys.argv[1])
def library(paths):
    found = runtime_probe(paths)
    if found and not found.get("error"):
        found["kind"] = library_kind(ctypes.CDLL(found["path"]))
    return found
print(json.dumps({
    "runner_kind": runner_kind(), "python": platform.python_version(),
    "neuron_runtime": library(ask["libraries"]), "looked_at": ask["libraries"],
}))
"""


SCRIPT = probe_script((board_files, runner_kind, neuron_paths), _BODY)


def candidates(neuron_lib: str | None) -> list[str]:
    """Where the runtime library is looked for: the one named, else every known path."""
    return [neuron_lib] if neuron_lib else list(neuron_paths.SEARCH_ORDER)


def probe_board(transport: Transport, neuron_lib: str | None = None) -> dict:
    """The board's report: the shell's facts (`python_at`: where the interpreter is, None when it is not; `abi` and
    `os_name` as device-info names them), and what its Python said (`python`: its version, None when none answered;
    `python_error`: what one that is there printed instead)."""
    facts = shell_facts(transport)
    shell = asdict(facts)
    board = {k: v for k, v in shell.items() if k != "python"} | {"python_at": shell["python"], "python": None,
                                                                 "abi": facts.abi, "os_name": facts.os_name}
    if shell["python"] is None:
        return board
    ask = {"libraries": candidates(neuron_lib)}
    res = transport.run([transport.python, "-c", SCRIPT, json.dumps(ask)], timeout=90)
    try:
        return board | json.loads(res.text)
    except ValueError:
        said = (res.stderr.decode(errors="replace").strip() or res.text.strip()).splitlines()
        return board | {"python_error": said[-1] if said else f"exit status {res.rc}"}


def present(transport: Transport, neuron_lib: str | None = None) -> list[str]:
    """Which of the Neuron library's candidates are files on the board, asked of its shell: what the doctor can see
    for the native runner before it runs (it opens the library itself, and says in hello which and how)."""
    paths = candidates(neuron_lib)
    res = transport.run(["sh", "-c", 'for f; do [ -f "$f" ] && echo "$f"; done; exit 0', "sh", *paths], timeout=60)
    return [line for line in res.text.splitlines() if line in paths]
