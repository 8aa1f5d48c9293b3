"""What the doctor asks of the board before any runner runs there: one stdlib script, run with the board's own
Python (device-info's way), that reports the OS image, kernel, cores by type, memory, thermal zones, the SoC
(device/runner/soc.py), what the system is (device/runner/runner_kind.py), /dev/apusys* and the Neuron runtime
library found (device/runner/neuron_paths.py's probe, as device-info's) with whether it is a stand-in. The
packages are deploy's own probe's (device/link/board_packages.py)."""
from __future__ import annotations

import json

from device.link.probe_script import probe_script
from device.link.transport import Transport
from device.runner import board_files, neuron_paths, runner_kind, soc

_BODY = r"""
import ctypes, glob, json, os, platform, re, shutil, subprocess, sys
ask = json.loads(sys.argv[1])
def getprop(name):
    exe = shutil.which("getprop")
    if not exe:
        return ""
    try:
        return subprocess.run([exe, name], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
def cores():
    parts, cpu = {}, None
    for line in read_text("/proc/cpuinfo").splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            cpu = value
        elif cpu is not None and key in ("CPU part", "model name"):
            parts[cpu] = value
    groups = {}
    for n in sorted(os.listdir("/sys/devices/system/cpu") if os.path.isdir("/sys/devices/system/cpu") else []):
        if not re.fullmatch(r"cpu\d+", n):
            continue
        khz = read_text("/sys/devices/system/cpu/%s/cpufreq/cpuinfo_max_freq" % n).strip()
        key = (parts.get(n[3:], "?"), int(khz) // 1000 if khz.isdigit() else None)
        groups[key] = groups.get(key, 0) + 1
    return [{"part": p, "max_mhz": mhz, "count": c} for (p, mhz), c in sorted(groups.items(), key=str)]
def library(paths):
    found = runtime_probe(paths)
    if found and not found.get("error"):
        found["kind"] = library_kind(ctypes.CDLL(found["path"]))
    return found
osr = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', read_text("/etc/os-release"), re.M))
mem = dict(re.findall(r"^(\w+):\s+(\d+) kB", read_text("/proc/meminfo"), re.M))
zones = [read_text(z + "/type").strip() for z in sorted(glob.glob("/sys/class/thermal/thermal_zone*"))]
print(json.dumps({
    "os": osr.get("PRETTY_NAME") or platform.system(), "os_id": osr.get("ID"),
    "android": getprop("ro.build.version.release") or None,
    "kernel": platform.release(), "arch": platform.machine(), "cores": cores(),
    "mem_total_mb": int(mem["MemTotal"]) // 1024 if "MemTotal" in mem else None,
    "thermal_zones": zones, "soc": board_soc(), "runner_kind": runner_kind(),
    "python": platform.python_version(),
    "apusys": sorted(glob.glob("/dev/apusys*")),
    "neuron_runtime": library(ask["libraries"]), "looked_at": ask["libraries"],
}))
"""


SCRIPT = probe_script((board_files, soc, runner_kind, neuron_paths), _BODY)


def candidates(neuron_lib: str | None) -> list[str]:
    """Where the runtime library is looked for: the one named, else every known path."""
    return [neuron_lib] if neuron_lib else list(neuron_paths.SEARCH_ORDER)


def probe_board(transport: Transport, neuron_lib: str | None = None) -> dict:
    """The board's report; ValueError when the script printed no JSON (e.g. no Python there)."""
    ask = {"libraries": candidates(neuron_lib)}
    res = transport.run([transport.python, "-c", SCRIPT, json.dumps(ask)], timeout=90)
    try:
        return json.loads(res.text)
    except ValueError:
        said = (res.stderr.decode(errors="replace").strip() or res.text.strip()).splitlines()
        raise ValueError(said[-1] if said else f"exit status {res.rc}") from None
