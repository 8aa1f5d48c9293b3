"""What the board's Python has, and what the chosen deploy mode's backend needs from it that it lacks.

The probe runs on the board with its own Python, stdlib only: its version, its wheel tags (`packaging.tags`, else
pip's vendored copy, else `pip debug --verbose`, else computed from sysconfig and the C library's version, as
PEP 600's manylinux_2_X tags are), which of the backends' modules it finds (with what deploy installed there
on the path, device/spec/deployed_packages.py), its installed distributions, and whether it can make a venv.
device/deploy/wheels.py fetches what is missing on the PC; device/deploy/board_install.py installs it on the board.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.errors import Fix, Setting, WhisperKVError
from device.link.transport import Transport
from device.spec import deployed_packages
from device.spec.backend_rows import ROWS

# The oldest Python the runner runs on (the board side; the PC's app needs pyproject's requires-python).
MIN_PYTHON = (3, 10)
# Module -> PyPI distribution, in the order deploy tries them for an either-or need ("a|b" in the backends'
# table): tflite-runtime first, the smaller wheel and the interpreter the recorded Genio image ships.
DISTRIBUTIONS = {"numpy": "numpy", "tflite_runtime": "tflite-runtime", "ai_edge_litert": "ai-edge-litert",
                 "onnx": "onnx", "onnxruntime": "onnxruntime"}



class PackageError(WhisperKVError):
    """The board lacks a package the backend needs and deploy cannot bring it (deploy.py's DeployError's code)."""

    code = "deploy"


PROBE_BODY = r'''
import importlib.util, json, os, platform, re, subprocess, sys, sysconfig
root, modules = sys.argv[1], json.loads(sys.argv[2])
deployed = use_deployed_packages(root)

def computed_tags():
    py = "cp%d%d" % sys.version_info[:2]
    arch, plats = platform.machine(), []
    libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else ""
    m = re.match(r"glibc 2\.(\d+)", libc or "")
    for minor in range(int(m.group(1)) if m else 0, 4, -1):
        plats.append("manylinux_2_%d_%s" % (minor, arch))
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}.get(minor)
        if legacy:
            plats.append("%s_%s" % (legacy, arch))
    plats.append(re.sub(r"[-.]", "_", sysconfig.get_platform()))
    return ["%s-%s-%s" % (py, abi, p) for abi in (py, "abi3", "none") for p in plats]

def tags():
    for name in ("packaging.tags", "pip._vendor.packaging.tags"):
        try:
            return [str(t) for t in __import__(name, fromlist=["sys_tags"]).sys_tags()], name
        except Exception:
            pass
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "debug", "--verbose"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True, timeout=120).stdout
        found = re.findall(r"^\s+(\w+-\w+-[\w.]+)\s*$", out.partition("Compatible tags")[2], re.M)
        if found:
            return found, "pip debug --verbose"
    except Exception:
        pass
    return computed_tags(), "sysconfig"

def have(name):
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False

try:
    from importlib import metadata
    dists = {re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower(): d.version for d in metadata.distributions()}
except Exception:
    dists = {}
found, source = tags()
print(json.dumps({"python": list(sys.version_info[:3]), "tags": found, "tags_from": source,
                  "modules": {m: have(m) for m in modules}, "distributions": dists,
                  "venv": have("venv") and have("ensurepip"), "pip": have("pip"), "deployed": deployed}))
'''
PROBE = Path(deployed_packages.__file__).read_text() + PROBE_BODY


@dataclass
class BoardPython:
    python: tuple[int, ...]          # (major, minor, micro)
    tags: list[str]                  # interpreter-abi-platform, most specific first
    tags_from: str                   # packaging.tags, pip._vendor.packaging.tags, pip debug --verbose, sysconfig
    modules: dict[str, bool]         # DISTRIBUTIONS' modules: found on the runner's path
    distributions: dict[str, str]    # installed distributions (names normalized, PEP 503) and their versions
    venv: bool                       # `python3 -m venv` can make a venv with pip in it (venv and ensurepip)
    pip: bool
    deployed: list[str]              # folders of packages an earlier deploy installed, on the path

    @property
    def version(self) -> str:
        return "%d.%d" % tuple(self.python[:2])

    @property
    def cp(self) -> str:
        return "cp%d%d" % tuple(self.python[:2])

    def _parts(self, index: int) -> list[str]:
        seen: dict[str, None] = {}
        for tag in self.tags:
            parts = tag.split("-")
            if len(parts) == 3 and parts[0] in (self.cp, f"py{self.python[0]}", f"py{self.cp[2:]}"):
                seen.setdefault(parts[index], None)
        return [p for p in seen if p != "any"]

    @property
    def platforms(self) -> list[str]:
        """Newest first, linux_<arch> last: packaging 26.3 lists that tag first, earlier releases last, and no index
        hosts a wheel of it (PyPI refuses them), so a board is named by, and fetched for, its manylinux tags."""
        parts = self._parts(2)
        return [p for p in parts if not p.startswith("linux_")] + [p for p in parts if p.startswith("linux_")]

    @property
    def abis(self) -> list[str]:
        return self._parts(1)


def probe(transport: Transport, root: str) -> BoardPython:
    """Ask the board's Python (transport.python) what it has; `root` is the deploy directory."""
    res = transport.run([transport.python, "-c", PROBE, root, json.dumps(list(DISTRIBUTIONS))], timeout=180)
    try:
        doc = json.loads(res.text)
    except ValueError:
        err = res.stderr.decode(errors="replace").strip().splitlines()
        raise PackageError(f"cannot ask {transport.python} on {transport.label} what it has: "
                          f"{err[-1] if err else 'no answer'}",
                          Fix("check that the board's Python runs (name it with ",
                              Setting("python", "/usr/bin/python3"), ")")) from None
    return BoardPython(python=tuple(doc["python"]), **{k: v for k, v in doc.items() if k != "python"})


def needs(mode: str) -> list[tuple[str, ...]]:
    """What the runner needs on the board for a deploy mode: NumPy, and the modules of the backends that mode
    ships for (the table's `needs`), each as the alternatives in DISTRIBUTIONS' order. `auto` needs only NumPy
    (the runner falls back to the NumPy reference)."""
    wanted = [("numpy",)]
    for spec in ROWS.values():
        if mode != "auto" and spec.deploy == mode:
            for need in spec.needs:
                alts = need.split("|")
                wanted.append(tuple(sorted(alts, key=lambda m: list(DISTRIBUTIONS).index(m)
                                           if m in DISTRIBUTIONS else len(DISTRIBUTIONS))))
    return list(dict.fromkeys(wanted))


def missing(board: BoardPython, mode: str) -> list[tuple[str, ...]]:
    """The needs of `mode` none of whose alternatives the board's Python finds."""
    return [alts for alts in needs(mode) if not any(board.modules.get(m) for m in alts)]


def too_old(board: BoardPython) -> tuple[str, str] | None:
    """(problem, fix) when the board's Python is older than the runner supports."""
    if tuple(board.python[:2]) >= MIN_PYTHON:
        return None
    least = "%d.%d" % MIN_PYTHON
    return (f"the board's Python {board.version} is older than the runner supports ({least})",
            Fix(f"install Python {least} or newer on the board and name it with ",
                Setting("python", "/usr/bin/python3.N")))
