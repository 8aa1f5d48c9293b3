"""The board in a box, brought up once a session for every module of tests/tools that needs it.

Fixtures (any test under tests/tools/ may ask for them by name):
- `board` (session): `tools/board-in-a-box up` on first use, `down` when the session ends (and `down` checked safe
  twice). Yields {"url": root with the image's empty password, "url_key": with the box's generated key,
  "root": the box's tree on the PC, "state": `status --json`}. Every up is a freshly flashed board, but within a
  session the box is shared: a test that needs a deployment deploys (deploy skips files already there).
- `offline_board` (function): the same box cut off from every package index for one test (`board-in-a-box
  offline`: no name resolves, pip's index is a closed port), online again after it.

A module that uses the box belongs under tests/tools/, so that it shares this one box: importing the fixture
into a module elsewhere would make pytest keep a second instance, whose `down` stops the box under the first.
Helpers to import: `from tests.tools.conftest import box, whisperkv, on_box, HELLO, TEST_EN, JFK`. The box
is a STAND-IN for a Genio 520 (docs/board.md section 9); it needs root and binfmt_misc, and is skipped only when
the binfmt_misc mount itself fails (or, off CI, when not root). The box is one machine for the whole PC: run
anything that uses it under `flock /tmp/board-box.lock python3 -m pytest …`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOX = ROOT / "tools" / "board-in-a-box"
HELLO = ROOT / "resources" / "audio" / "en_asterisk_hello-world.wav"
TEST_EN = ROOT / "resources" / "audio" / "test_en.wav"
JFK = "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."


def box(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BOX), *args], capture_output=True, text=True, timeout=timeout)


def whisperkv(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)


def on_box(board: dict, script: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """A shell command run inside the box as its sshd would run it (chroot, the box's environment)."""
    from tools.board_box.host import CLEAN_ENV

    return subprocess.run(["chroot", str(board["root"]), "sh", "-c", script], capture_output=True, text=True,
                          timeout=timeout, env=CLEAN_ENV)


@pytest.fixture(scope="session")
def board():
    if os.geteuid() != 0:
        pytest.skip("the board in a box needs root (chroot and mounts); CI runs as root")
    up = box("up", timeout=90 * 60)        # a first build runs debootstrap under emulation
    if up.returncode == 2 and "binfmt_misc cannot be mounted" in up.stderr:
        pytest.skip(up.stderr.strip())
    assert up.returncode == 0, up.stderr
    state = json.loads(box("status", "--json").stdout)
    yield {"url": up.stdout.strip().splitlines()[-1], "url_key": state["url_key"],
           "root": Path(state["root"]), "state": state}
    down = box("down")
    assert down.returncode == 0, down.stderr
    assert box("status").stdout.strip() == "down"
    assert box("down").returncode == 0        # safe twice


@pytest.fixture
def offline_board(board):
    cut = box("offline")
    assert cut.returncode == 0, cut.stderr
    try:
        yield board
    finally:
        back = box("online")
        assert back.returncode == 0, back.stderr
