"""The dla path as a user runs it, over a real OpenSSH server on 127.0.0.1: `whisperkv compile` with the
STAND-IN ncc-tflite, `whisperkv deploy --backend dla`, then `whisperkv transcribe` on the deployed runner with the
STAND-IN Neuron runtime library (tests/device/runner/standin/, see test_dla_backend.py): the NumPy reference's
tokens, computed by the runtime's create and run calls on the board's copy of the .dla files, and a stop line
that says the graphs ran on the NPU."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from tests.conftest import AUDIO, ROOT
from tests.device.runner.standin.build import build_standin
from tests.device.toolchain.ncc_standin import write_ncc


def whisperkv(home, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(home))
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900, stdin=subprocess.DEVNULL, check=False)


@pytest.fixture(scope="module")
def board(sshd, tmp_path_factory):
    """A user whose known_hosts trusts the test sshd, a compiled bundle deployed for the dla over SSH, and the
    stand-in runtime library: (home, device URL, board directory, library, compile and deploy output)."""
    from device.deploy.deploy import cached_tflite_bundle

    root = tmp_path_factory.mktemp("dla-ssh")
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    sshd.write_known_hosts(home / ".ssh" / "known_hosts")
    bundle = root / "b"
    shutil.copytree(cached_tflite_bundle(), bundle)
    ncc = write_ncc(root, root / "ncc.log")
    compiled = whisperkv(home, "compile", str(bundle), "--ncc", str(ncc))
    assert compiled.returncode == 0, compiled.stderr
    url = f"ssh://{sshd.user}@127.0.0.1:{sshd.port}?python={sys.executable}&dir={root / 'board'}&key={sshd.user_key}"
    deployed = whisperkv(home, "deploy", "--device", url, "--backend", "dla", "--model", str(bundle))
    assert deployed.returncode == 0, deployed.stderr
    return home, url, root / "board", build_standin(root), compiled.stdout + deployed.stdout


def test_compile_and_deploy_ship_only_the_compiled_graphs(board):
    _, _, target, _, said = board
    assert "compiled 3 graphs" in said and "backend=dla" in said     # the step's attention variant too
    shipped = {p.name for p in (target / "model").iterdir()}
    assert shipped == {"encoder.dla", "decoder_step.dla", "decoder_step_attention.dla", "token_embedding.npy",
                       "positional_embedding.npy", "tokenizer.json", "model.json"}


def test_the_dla_over_ssh_gives_the_reference_tokens_and_says_it_ran_on_the_npu(board, model, clip_mels):
    home, url, target, lib, _ = board
    device = f"{url}&backend=dla&neuron_lib={lib}"
    wav = str(AUDIO / "test_en.wav")
    doc = whisperkv(home, "transcribe", wav, "--device", device, "--language", "en", "--json")
    assert doc.returncode == 0, doc.stderr
    got = json.loads(doc.stdout)
    want = Transcript()
    for ev in model.transcribe(clip_mels("test_en.wav"), DecodeOptions(language="en")):
        want.add(ev)
    assert got["tokens"] == want.tokens and got["backend"] == "dla"
    assert got["ran_on"]["where"] == "npu"
    # the board's copy of each graph was created once by the runtime and run there: once per window for the
    # encoder, once per decoded position for the step
    calls = {g: (target / "model" / f"{g}.dla.calls").read_text().split() for g in ("encoder", "decoder_step")}
    assert calls["encoder"] == ["create", "run"]
    assert calls["decoder_step"].count("create") == 1 and calls["decoder_step"].count("run") == 4 + len(got["steps"]) - 1
    # the NPU's own profile, from the (stand-in) runtime on the board to this PC over SSH
    text = whisperkv(home, "transcribe", wav, "--device", device, "--language", "en", "--npu-profile",
                     str(home / "prof"))
    assert text.returncode == 0, text.stderr
    assert "ask not what your country can do for you" in text.stdout
    assert (f"backend dla | ran on the NPU (encoder.dla, decoder_step.dla on the Neuron runtime) | Neuron runtime "
            f"V1 0.0.1, native I/O ({lib})]") in text.stderr
    assert sorted(p.name for p in (home / "prof").iterdir()) == ["w00-decoder_step.csv", "w00-encoder.csv"]
    assert "decoder step (one token):" in text.stderr
