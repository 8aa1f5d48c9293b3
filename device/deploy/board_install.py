"""Bring the board what the chosen backend needs and its Python lacks, from wheels fetched on the PC, offline.

plan(): probe the board (board_packages.py), refuse a Python older than the runner supports, and fetch the
missing packages' wheels on the PC (wheels.py), before anything is uploaded. install(): ship the wheels to
DIR/wheels and install them there with the board's pip and no index (`--no-index --no-deps --ignore-installed`:
exactly the files the PC resolved for the board, less what the board has), into DIR/venv, a venv made with
--system-site-packages, or with `pip --target DIR/site/pythonX.Y` where no venv can be made; then import each
package with the board's Python as the runner will (device/spec/deployed_packages.py) and delete the wheels.
When nothing is missing, nothing is fetched or installed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from device.deploy.board_packages import DISTRIBUTIONS, BoardPython, PackageError, missing, probe, too_old
from device.deploy.wheels import fetch
from device.link.transport import Transport
from device.spec import deployed_packages

INSTALL_FIX = "install {names} on the board with its package manager, or deploy with --backend auto"
# What the runner imports of each (a package's top level can import while its compiled part cannot).
IMPORTS = {"tflite_runtime": "tflite_runtime.interpreter", "ai_edge_litert": "ai_edge_litert.interpreter"}
# Run by the board's Python as the runner starts (device/runner/__main__.py): argv root, module...
IMPORT_PROBE = Path(deployed_packages.__file__).read_text() + (
    "\nuse_deployed_packages(sys.argv[1])\nimport importlib\nfor name in sys.argv[2:]:\n"
    "    importlib.import_module(name)\n")


@dataclass
class PackagePlan:
    board: BoardPython
    missing: list[tuple[str, ...]]            # the needs the board lacks (alternative modules)
    distributions: list[str] = field(default_factory=list)   # what is fetched for them
    wheels: list[Path] = field(default_factory=list)         # the files that ship


def plan(transport: Transport, root: str, mode: str, wheels_dir: Path | None, tmp: Path, say) -> PackagePlan:
    board = probe(transport, root)
    old = too_old(board)
    if old:
        raise PackageError(*old)
    lacks = missing(board, mode)
    if not lacks:
        found = ", ".join(m for m, ok in board.modules.items() if ok)
        say(f"board packages: nothing to install (its Python {board.version} has {found})")
        return PackagePlan(board, [])
    if not board.pip:
        raise PackageError(f"the board's Python {board.version} lacks {_names(lacks)} and has no pip to install them",
                          INSTALL_FIX.format(names=_names(lacks)) + ", or install python3-pip there")
    chosen, wheels = fetch(board, lacks, tmp / "wheels", wheels_dir, say)
    say(f"board packages: {_names(lacks)} missing; installing {', '.join(chosen)} from {len(wheels)} wheels "
        f"({sum(p.stat().st_size for p in wheels) / 1e6:.1f} MB)")
    return PackagePlan(board, lacks, chosen, wheels)


def _names(lacks: list[tuple[str, ...]]) -> str:
    return ", ".join(" or ".join(alts) for alts in lacks)


def _check(transport: Transport, argv: list[str], what: str, fix: str, timeout: float = 600) -> None:
    res = transport.run(argv, timeout=timeout)
    if res.rc != 0:
        lines = [ln for ln in (res.stderr + res.stdout).decode(errors="replace").splitlines() if ln.strip()]
        raise PackageError(f"{what} on {transport.label}: {lines[-1].strip() if lines else f'exit {res.rc}'}", fix)


def install(transport: Transport, root: str, p: PackagePlan, say) -> dict:
    """Install the plan's wheels on the board; what it did, for the manifest and deploy's result."""
    if not p.missing:
        return {"installed": [], "into": (p.board.deployed or [None])[0]}
    version = p.board.version
    remote = f"{root}/wheels"
    _check(transport, ["mkdir", "-p", remote], "cannot create the wheel folder", "pick a writable directory with --dir")
    for w in p.wheels:
        say(f"  {w.name} ({w.stat().st_size / 1e6:.1f} MB)")
        transport.put([w], f"{remote}/{w.name}")
    files = [f"{remote}/{w.name}" for w in p.wheels]
    pip = ["-m", "pip", "install", "--no-index", "--no-deps", "--ignore-installed", "--disable-pip-version-check",
           "--no-input", "--no-warn-script-location"]
    fix = INSTALL_FIX.format(names=", ".join(p.distributions))
    into = None
    if p.board.venv:
        venv = f"{root}/venv"
        if transport.run(["test", "-x", f"{venv}/bin/python"]).rc == 0 or transport.run(
                [transport.python, "-m", "venv", "--system-site-packages", venv], timeout=600).rc == 0:
            into, argv = f"{venv}/lib/python{version}/site-packages", [f"{venv}/bin/python", *pip, *files]
        else:       # e.g. Debian's Python without python3-venv, whose ensurepip refuses to run
            transport.run(["rm", "-rf", venv])
    if into is None:
        into = f"{root}/site/python{version}"
        argv = [transport.python, *pip, "--target", into, *files]
    if files:
        _check(transport, argv, f"pip could not install {', '.join(p.distributions)}", fix)
    modules = [IMPORTS.get(m, m) for alts in p.missing for m in alts if DISTRIBUTIONS.get(m, m) in p.distributions]
    _check(transport, [transport.python, "-c", IMPORT_PROBE, root, *modules],
           f"{', '.join(p.distributions)} installed but does not import", fix)
    transport.run(["rm", "-rf", remote])
    say(f"board packages: installed {', '.join(p.distributions)} into {into} (the runner puts it on its path)")
    return {"installed": p.distributions, "into": into}
