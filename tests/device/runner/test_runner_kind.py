"""hello's `runner_kind` and `npu` (device/runner/runner_kind.py): this PC, an emulation, a board; a STAND-IN
Neuron runtime or MediaTek's."""
from __future__ import annotations

import ctypes

from device.runner.runner_kind import library_kind, runner_kind
from tests.device.runner.standin.build import build_standin


def test_an_x86_machine_is_this_pc_and_qemu_user_mode_is_an_emulation(monkeypatch):
    assert runner_kind("x86_64") == "pc"
    monkeypatch.setenv("QEMU_CPU", "cortex-a55")
    assert runner_kind("aarch64") == "emulated"


def test_an_arm_machine_reading_this_pcs_cpuinfo_is_an_emulation(monkeypatch):
    monkeypatch.delenv("QEMU_CPU", raising=False)
    # on this x86 PC /proc/cpuinfo names an x86 vendor: an aarch64 process reading it runs under QEMU user mode
    assert runner_kind("aarch64") == "emulated"


def test_the_stand_in_runtime_says_it_is_one(tmp_path):
    assert library_kind(ctypes.CDLL(str(build_standin(tmp_path)))) == "stand-in"
    assert library_kind(ctypes.CDLL(None)) == "real"      # a library without the mark: taken for MediaTek's
