"""Fetch, on the PC, binary wheels for the board's Python and tags (device/deploy/board_packages.py).

`pip download --only-binary=:all:` with the board's --platform, --python-version, --implementation and --abi
resolves each package and its dependencies for the board, not for this PC; from PyPI, or with `wheels_dir` from
a folder alone (--no-index --find-links: a lab PC with no internet). Wheels of distributions the board already
has are left out of what ships.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from device.deploy.board_packages import DISTRIBUTIONS, BoardPython, PackageError

PEP440 = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9.]+)?$")
WHEELS_FIX = ("on a PC with internet run `pip download --dest DIR {args} {dist}`, copy DIR "
              "to this PC and deploy with --wheels DIR; or install {dist} on the board with its package manager")


def download_args(board: BoardPython) -> list[str]:
    """The pip options that select wheels for the board's interpreter instead of this PC's."""
    args = ["--only-binary=:all:", "--implementation", "cp", "--python-version", board.version]
    for abi in board.abis:
        args += ["--abi", abi]
    for plat in board.platforms:
        args += ["--platform", plat]
    return args


def wheel_distribution(path: Path) -> str:
    """A wheel file's distribution name, normalized (PEP 503): its name's first dash-separated field."""
    return re.sub(r"[-_.]+", "-", path.name.split("-")[0]).lower()


def _unfound(stderr: str, default: str) -> str:
    names = re.findall(r"No matching distribution found for ([A-Za-z0-9_.\-]+)", stderr)
    return names[-1] if names else default


def constraints(board: BoardPython, path: Path) -> Path:
    """A pip constraints file pinning what the board has, so that the PC resolves against the board's own
    versions (a package needing a newer NumPy than the board's is not chosen)."""
    pins = [f"{name}=={version}" for name, version in sorted(board.distributions.items())
            if PEP440.match(version or "")]
    path.write_text("".join(line + "\n" for line in pins))
    return path


def download(board: BoardPython, dist: str, dest: Path, wheels_dir: Path | None = None) -> str | None:
    """Download `dist` and its dependencies for the board into `dest`; None, or the distribution with no wheel."""
    where = ["--no-index", "--find-links", str(wheels_dir)] if wheels_dir else ["--retries", "2", "--timeout", "30"]
    pins = constraints(board, dest.parent / f"{dest.name}-board-constraints.txt")
    res = subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-input",
                          "--dest", str(dest), "--constraint", str(pins), *where, *download_args(board), dist],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    return None if res.returncode == 0 else _unfound(res.stderr, dist)


def hand_platforms(board: BoardPython) -> list[str]:
    """The board's platforms to name in a hand-typed `pip download`: pip widens only manylinux2014 and 2010 to older
    tags, not manylinux_2_X (pip's compatibility_tags), so the newest and the common PEP 600 baselines."""
    common = [p for p in board.platforms if re.match(r"manylinux(_2_2[78]|2014)_", p)]
    return list(dict.fromkeys(board.platforms[:1] + common))


def fetch(board: BoardPython, wanted: list[tuple[str, ...]], dest: Path, wheels_dir: Path | None = None,
          say=lambda line: None) -> tuple[list[str], list[Path]]:
    """For each need (alternative modules, board_packages.needs), the first distribution that has wheels for the
    board, with its dependencies: (distributions chosen, wheel files to ship). A need none of whose alternatives
    has a wheel raises the one line naming them and the fix."""
    dest.mkdir(parents=True, exist_ok=True)
    plat = board.platforms[0] if board.platforms else "this board"
    chosen = []
    for alts in wanted:
        tried = []
        for module in alts:
            dist = DISTRIBUTIONS.get(module, module)
            say(f"  fetching {dist} for the board's Python {board.version} ({plat})"
                + (f" from {wheels_dir}" if wheels_dir else ""))
            lost = download(board, dist, dest, wheels_dir)
            if lost is None:
                chosen.append(dist)
                break
            tried.append(dist if lost == dist else f"{lost} (for {dist})")
        else:
            args = " ".join(download_args(board)[:5] + [f"--abi {board.cp}"]
                            + [f"--platform {p}" for p in hand_platforms(board)])
            raise PackageError(f"no wheel of {' or '.join(tried)} for the board's Python {board.version} on {plat}"
                               + (f" in {wheels_dir}" if wheels_dir else ""),
                               WHEELS_FIX.format(args=args, dist=dist))
    have = set(board.distributions)
    ships = sorted(p for p in dest.glob("*.whl") if wheel_distribution(p) not in have)
    return chosen, ships
