"""`auto` on an Arm board never picks a backend whose registry row names other CPU architectures: the x86-64
AVX-512 C step (native-int8b) above all, even where the board's /proc/cpuinfo would claim AVX-512 (qemu-user
shows its guests the PC's x86 cpuinfo unless the board in a box mounts an arm64 one over it)."""
from types import SimpleNamespace

import pytest

from device.runner.backends import REGISTRY, choose_auto
from device.runner.native import library
from device.spec import backend_rows as backends


@pytest.fixture
def c_step_would_run(monkeypatch):
    """The C step's own probe and build both say yes: only the row's `arches` can keep it out."""
    monkeypatch.setattr(library, "unsupported", lambda: None)
    monkeypatch.setattr(library, "ready", lambda: True)


def on(monkeypatch, arch: str) -> None:
    monkeypatch.setattr(backends.platform, "machine", lambda: arch)


def test_auto_on_aarch64_picks_an_arm_backend_for_weights(monkeypatch, c_step_would_run):
    on(monkeypatch, "x86_64")
    assert choose_auto() == "native-int8b"        # the stand-in probe above does make it eligible on a PC
    on(monkeypatch, "aarch64")
    chosen = choose_auto()
    assert chosen != "native-int8b" and REGISTRY[chosen].row.runs_on("aarch64")


def test_auto_on_aarch64_picks_tflite_for_a_tflite_bundle(monkeypatch, c_step_would_run):
    on(monkeypatch, "aarch64")
    tflite_only = SimpleNamespace(has=lambda role, fmt="onnx": fmt == "tflite")
    assert choose_auto(tflite_only) == "tflite"

