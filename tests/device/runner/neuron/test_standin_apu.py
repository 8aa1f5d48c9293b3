"""The STAND-IN APU (tests/device/runner/standin/apu.py), as the board in a box uses it: a STAND-IN runtime built
with STANDIN_APU hands every graph to a process apart, which computes it. Through it, a runner that cannot import
any TFLite interpreter gives the NumPy reference's tokens on test_en.wav, and each graph's create and run reach
the APU; with the APU gone, the run stops with one line and the runner serves on."""
from __future__ import annotations

import subprocess
import sys

import pytest

from device.link.local import LocalTransport
from tests.conftest import ROOT
from tests.device.bundle_helpers import YOCTO_NAME, compiled_dla_bundle
from tests.device.runner.board_packages import BOARD_LACKS, block_in_runners, transcribe_clips
from tests.device.runner.standin.build import build_standin

NO_INTERPRETER = (*BOARD_LACKS, "ai_edge_litert")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("apu")


@pytest.fixture(scope="module")
def library(folder):
    """A V1-only STAND-IN runtime whose APU listens at `folder`/apu.sock."""
    return build_standin(folder, "WITH_V1", f'STANDIN_APU="{folder / "apu.sock"}"', name=YOCTO_NAME)


def start_apu(folder) -> subprocess.Popen:
    (folder / "apu.sock").unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "tests.device.runner.standin.apu", str(folder / "apu.sock")],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def runner_args(library) -> list[str]:
    return ["--backend", "dla", "--model", str(compiled_dla_bundle()), "--neuron-lib", str(library)]


def test_a_runner_without_an_interpreter_gets_the_reference_tokens_from_the_apu(folder, library, tmp_path,
                                                                                 monkeypatch):
    reference = transcribe_clips(LocalTransport(), ["--backend", "numpy"], ("test_en.wav",))
    for graph in ("encoder", "decoder_step"):
        (compiled_dla_bundle() / f"{graph}.dla.calls").unlink(missing_ok=True)
    apu = start_apu(folder)
    try:
        block_in_runners(monkeypatch, tmp_path / "site", NO_INTERPRETER)
        assert transcribe_clips(LocalTransport(), runner_args(library), ("test_en.wav",)) == reference
    finally:
        apu.terminate()
        apu.wait(timeout=30)
    assert (compiled_dla_bundle() / "encoder.dla.calls").read_text().split() == ["create", "run"]
    assert "ask not what your country" in reference["test_en.wav"][1]


def test_with_the_apu_gone_the_runner_says_so_in_one_line_and_serves_on(folder, library):
    from device import protocol as P
    from tests.device.link_helpers import RawRunner
    from tests.device.runner.serve.test_agent import error

    (folder / "apu.sock").unlink(missing_ok=True)
    r = RawRunner(*runner_args(library))
    try:
        for _ in range(2):
            r.request({"op": "hello", "protocol": P.PROTOCOL})
            ev = error(r)
            assert "\n" not in ev["message"] and "encoder.dla" in ev["message"], ev
            assert "APU driver is loaded" in ev["message"]
    finally:
        r.close()
