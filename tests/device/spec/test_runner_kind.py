"""hello's `runner_kind` and `npu` (device/spec/runner_kind.py): this PC, an emulation, a board; a STAND-IN
Neuron runtime or MediaTek's."""
from __future__ import annotations

import ctypes

from device.spec.neuron_paths import version_of
from device.spec.runner_kind import STANDIN_SYMBOL, library_kind, runner_kind
from tests.device.runner.standin.build import build_standin


def test_an_x86_machine_is_this_pc_and_qemu_user_mode_is_an_emulation(monkeypatch):
    assert runner_kind("x86_64") == "pc"
    monkeypatch.setenv("QEMU_CPU", "cortex-a55")
    assert runner_kind("aarch64") == "emulated"


def test_an_arm_machine_reading_this_pcs_cpuinfo_is_an_emulation(monkeypatch):
    monkeypatch.delenv("QEMU_CPU", raising=False)
    # on this x86 PC /proc/cpuinfo names an x86 vendor: an aarch64 process reading it runs under QEMU user mode
    assert runner_kind("aarch64") == "emulated"


def test_the_stand_in_runtime_says_it_is_one_by_its_version_or_its_marker(tmp_path):
    plain = ctypes.CDLL(str(build_standin(tmp_path)))
    assert not hasattr(plain, STANDIN_SYMBOL)            # the tests' builds go without it, as MediaTek's library does
    assert library_kind(plain) == "stand-in"              # told by the version 0.0.1
    marked = ctypes.CDLL(str(build_standin(tmp_path, "WITH_MARKER", "NO_VERSION")))
    assert library_kind(marked) == "stand-in"
    assert library_kind(ctypes.CDLL(None)) == "real"      # a library with neither: taken for MediaTek's


def test_the_version_is_read_with_one_signature_whoever_asks_first(tmp_path):
    """hello read the version for backend_detail (version_of) and then for `npu` (library_kind): the second call
    once passed another argument type to the same ctypes function and raised ArgumentError on every library but
    a marked stand-in."""
    lib = ctypes.CDLL(str(build_standin(tmp_path, "WITH_V1")))
    assert version_of(lib) == "0.0.1"
    assert library_kind(lib) == "stand-in" and version_of(lib) == "0.0.1"
