"""The native runner on the board in a box (tests/tools/conftest.py's `board`, a STAND-IN for a Genio 520):
`whisperkv deploy --runner native` ships the runner in C built for aarch64, with the bundle's `.dla` graphs and
native tables, and a box whose Python is taken away gets it unasked. Its Neuron library is the STAND-IN's build for
a process without Python (tools/board_box/standin.py NATIVE_LIB: to reach the STAND-IN APU, which computes each
graph on the PC, that library starts an interpreter of its own from the box's libpython); the runner runs no Python.
Its tokens are held to the PC's NumPy reference, which the Python runner's dla backend on the box gives too
(test_dla_on_the_box.py). Run under `flock /tmp/board-box.lock`."""
from __future__ import annotations

import json
import shutil

import pytest

from tests.device.runner.neuron.test_dla_backend import dla_bundle  # noqa: F401  (the compiled bundle, module fixture)
from tests.tools.conftest import HELLO, whisperkv
from tools.board_box.standin import NATIVE_LIB

RUNNER_DIR = "root/whisperkv"


def reference(audio) -> dict:
    pc = whisperkv("transcribe", str(audio), "--backend", "numpy", "--json")
    assert pc.returncode == 0, pc.stderr
    return json.loads(pc.stdout)


def on_native(board, *args: str) -> dict:
    r = whisperkv("transcribe", str(HELLO), "--json", "--device", f"{board['url']}&neuron_lib={NATIVE_LIB}", *args,
                  timeout=3600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def deployed_runner(board) -> str:
    return json.loads((board["root"] / RUNNER_DIR / "manifest.json").read_text())["runner"]


@pytest.fixture
def without_python(board):
    """The box with its Python taken away (every /usr/bin/python3*), given back after the test."""
    hidden = board["root"] / "root" / "hidden-python"
    hidden.mkdir(exist_ok=True)
    moved = sorted((board["root"] / "usr" / "bin").glob("python3*"))
    for exe in moved:
        exe.rename(hidden / exe.name)
    try:
        yield board
    finally:
        for exe in moved:
            (hidden / exe.name).rename(exe)
        shutil.rmtree(hidden, ignore_errors=True)


def test_runner_native_on_the_box_gives_the_reference_tokens(board, dla_bundle):  # noqa: F811
    r = whisperkv("deploy", "--device", board["url"], "--runner", "native", "--backend", "dla", "--model",
                  str(dla_bundle))
    assert r.returncode == 0, r.stderr
    assert deployed_runner(board) == "native" and (board["root"] / RUNNER_DIR / "bin/whisperkv-runner").is_file()
    doc = on_native(board, "--runner", "native")
    assert doc["runner"] == "native" and doc["machine"]["arch"] == "aarch64" and doc["runner_kind"] == "emulated"
    assert doc["tokens"] == reference(HELLO)["tokens"] and doc["ran_on"]["where"] == "npu"


def test_a_box_without_python_gets_the_native_runner_from_deploy_unasked(without_python, dla_bundle):  # noqa: F811
    board = without_python
    r = whisperkv("deploy", "--device", board["url"], "--backend", "dla", "--model", str(dla_bundle))
    assert r.returncode == 0, r.stderr
    assert deployed_runner(board) == "native"
    doc = on_native(board)        # the URL names no runner: the link starts the one deploy recorded
    assert doc["runner"] == "native" and doc["tokens"] == reference(HELLO)["tokens"]
