"""`whisperkv deploy --backend tflite` on a board whose Python lacks the TFLite interpreter: this PC's Python as a
bare venv (tests/device/link/board_python.py), every board command run with no reachable package index. Deploy
fetches tflite-runtime on the PC for the board's tags, installs it there from the shipped wheel with no index, and
hello-world then gives the NumPy reference's tokens through the tflite backend; a second deploy installs nothing.
Needs PyPI once per session (the fetch); the --wheels test runs with no index on the PC either."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from device.deploy import board_install
from device.deploy.board_packages import probe
from device.deploy.deploy import deploy
from tests.conftest import AUDIO, ROOT
from tests.device.link.board_python import (  # noqa: F401  (the session's board and wheels)
    NO_INDEX_ENV,
    OfflineBoard,
    board_python,
    lab_wheels,
    pc_wheels,
)
from tests.device.toolchain.test_compile import make_bundle

CLIP = "en_asterisk_hello-world.wav"
# What the runner does first (device/runner/__main__.py), from the deploy directory; then the interpreter's import.
RUNNER_START = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "from device.spec.deployed_packages import use_deployed_packages as use; use(sys.argv[1]); "
                "import tflite_runtime.interpreter as m; print(m.__file__)")


def whisperkv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900, stdin=subprocess.DEVNULL, check=False)


@pytest.fixture(scope="module")
def fetched(board_python, tmp_path_factory):
    """The first deploy (wheels fetched on this PC) and the second, with the board and what each logged."""
    target = tmp_path_factory.mktemp("deploy-packages") / "board dir"
    board = OfflineBoard(board_python, str(target))
    said: list[str] = []
    first = deploy(board, dir=str(target), backend="tflite", log=said.append)
    pips = board.pip_runs()
    board.ran.clear()
    again: list[str] = []
    second = deploy(board, dir=str(target), backend="tflite", log=again.append)
    return target, first, pips, "\n".join(said), second, board.pip_runs(), "\n".join(again)


def test_the_board_lacks_the_interpreter_and_deploy_installs_it_with_no_index(fetched, board_python):
    target, first, pips, said, *_ = fetched
    assert "board packages: tflite_runtime or ai_edge_litert missing; installing tflite-runtime" in said
    assert first["packages"]["installed"] == ["tflite-runtime"]
    site = f"{target}/venv/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    assert first["packages"]["into"] == site
    (install,) = pips                                  # one pip, on the board: an install from the shipped files
    assert install[0] == f"{target}/venv/bin/python" and "--no-index" in install
    wheels = [a for a in install if a.endswith(".whl")]
    assert [os.path.basename(w).split("-")[0] for w in wheels] == ["tflite_runtime"]   # NumPy: the board's own
    assert all(w.startswith(f"{target}/wheels/") for w in wheels)
    assert not (target / "wheels").exists()             # the wheels are deleted once installed
    # the board's own Python still lacks it: the runner finds it in the deploy directory
    bare = subprocess.run([board_python, "-c", "import tflite_runtime"], capture_output=True)
    assert bare.returncode != 0


def test_hello_world_then_gives_the_reference_tokens_through_the_tflite_backend(fetched, board_python, model,
                                                                                 clip_mels):
    target = fetched[0]
    device = f"local?python={board_python}&dir={target}&backend=tflite"
    doc = whisperkv("transcribe", str(AUDIO / CLIP), "--device", device, "--language", "en", "--json")
    assert doc.returncode == 0, doc.stderr
    got = json.loads(doc.stdout)
    want = Transcript()
    for ev in model.transcribe(clip_mels(CLIP), DecodeOptions(language="en")):
        want.add(ev)
    assert got["backend"] == "tflite" and got["tokens"] == want.tokens


def test_a_second_deploy_installs_nothing_and_says_so(fetched):
    target, first, *_, second, pips, again = fetched
    assert pips == [] and second["packages"] == {"installed": [], "into": first["packages"]["into"]}
    assert json.loads((target / "manifest.json").read_text())["packages"]["into"] == first["packages"]["into"]
    assert "board packages: nothing to install" in again and "tflite_runtime" in again


def test_deploy_from_a_wheel_folder_needs_no_index_on_the_pc(board_python, lab_wheels, tmp_path, monkeypatch):
    for name, value in NO_INDEX_ENV.items():                       # this PC: no index either
        monkeypatch.setenv(name, value)
    target = tmp_path / "board"
    said: list[str] = []
    result = deploy(OfflineBoard(board_python, str(target)), dir=str(target), backend="tflite", wheels=lab_wheels,
                    model=str(make_bundle(tmp_path / "b")), log=said.append)
    assert result["packages"]["installed"] == ["tflite-runtime"]
    assert f"from {lab_wheels}" in "\n".join(said)
    ok = subprocess.run([board_python, "-c", RUNNER_START, str(target)], capture_output=True, text=True, cwd="/")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"{target}/venv/lib/")


def test_where_no_venv_can_be_made_pip_target_puts_it_where_the_runner_looks(board_python, lab_wheels, tmp_path,
                                                                            monkeypatch):
    monkeypatch.setattr(board_install, "probe", lambda transport, root: replace(probe(transport, root), venv=False))
    target = tmp_path / "board"
    board = OfflineBoard(board_python, str(target))
    result = deploy(board, dir=str(target), backend="tflite", wheels=lab_wheels, model=str(make_bundle(tmp_path / "b")))
    site = f"{target}/site/python{sys.version_info[0]}.{sys.version_info[1]}"
    assert result["packages"] == {"installed": ["tflite-runtime"], "into": site}
    (install,) = board.pip_runs()
    assert install[0] == board_python and "--no-index" in install and install[install.index("--target") + 1] == site
    assert not (target / "venv").exists()
    ok = subprocess.run([board_python, "-c", RUNNER_START, str(target)], capture_output=True, text=True, cwd="/")
    assert ok.returncode == 0 and ok.stdout.startswith(f"{site}/tflite_runtime/"), ok.stderr
    assert deploy(board, dir=str(target), backend="tflite", model=str(make_bundle(tmp_path / "b")))[
        "packages"] == {"installed": [], "into": site}
