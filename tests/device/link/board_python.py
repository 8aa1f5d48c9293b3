"""A "board" for the deploy-installs-what-is-missing tests: this PC's Python as a bare venv without system packages,
holding only what the runner itself imports (NumPy), and
a transport to it whose every command sees no package index (a closed port, no pip configuration)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from device.link.local import LocalTransport
from device.link.transport import CommandResult

# NumPy 1.x: the tflite-runtime 2.14 wheel (PyPI's newest for cp311) is built against NumPy 1 and fails to load a
# graph under NumPy 2 ("_ARRAY_API not found").
BOARD_NUMPY = "numpy==1.26.4"
CLOSED_INDEX = "http://127.0.0.1:9/simple"      # the discard port: nothing listens there
NO_INDEX_ENV = {"PIP_INDEX_URL": CLOSED_INDEX, "PIP_EXTRA_INDEX_URL": CLOSED_INDEX, "PIP_CONFIG_FILE": os.devnull,
                "PIP_FIND_LINKS": "", "PIP_CONSTRAINT": ""}


def pip(*args: str, python: str = sys.executable, env: dict | None = None) -> None:
    subprocess.run([python, "-m", "pip", "--disable-pip-version-check", "--no-input", *args], check=True,
                   capture_output=True, env=env, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def pc_wheels(tmp_path_factory) -> Path:
    """The session's wheels, downloaded once: the board's own NumPy."""
    d = tmp_path_factory.mktemp("pc-wheels")
    pip("download", "--no-deps", "--only-binary=:all:", "--dest", str(d), BOARD_NUMPY)
    return d


@pytest.fixture(scope="session")
def board_python(tmp_path_factory, pc_wheels) -> str:
    """The bare venv's interpreter, with NumPy (1.x) installed from pc_wheels, nothing else."""
    venv = tmp_path_factory.mktemp("board") / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = str(venv / "bin" / "python")
    pip("install", "--no-index", "--no-deps", *map(str, sorted(pc_wheels.glob("*.whl"))), python=python,
        env=dict(os.environ, **NO_INDEX_ENV))
    return python


@pytest.fixture(scope="session")
def lab_wheels(board_python, tmp_path_factory) -> Path:
    """A folder as a lab PC with no internet is handed: tflite-runtime and its dependencies for the board, fetched
    once a session the way deploy fetches them."""
    from device.deploy.board_packages import probe
    from device.deploy.wheels import download

    folder = tmp_path_factory.mktemp("lab") / "lab wheels"
    assert download(probe(LocalTransport(python=board_python), str(folder)), "tflite-runtime", folder) is None
    return folder


class OfflineBoard(LocalTransport):
    """LocalTransport whose commands run with no reachable package index, each recorded in `ran`."""

    def __init__(self, python: str, dir: str):
        super().__init__(python=python, dir=dir)
        self.ran: list[list[str]] = []

    def run(self, argv: list[str], timeout: float = 60.0, cwd: str | None = None) -> CommandResult:
        self.ran.append(list(argv))
        p = subprocess.run(argv, cwd=os.path.expanduser(cwd) if cwd else None, capture_output=True, timeout=timeout,
                           env=dict(os.environ, **NO_INDEX_ENV))
        return CommandResult(p.returncode, p.stdout, p.stderr)

    def pip_runs(self) -> list[list[str]]:
        return [a for a in self.ran if a[1:3] == ["-m", "pip"]]
