"""What the runner runs on, as hello's `runner_kind` and `npu` say it (docs/doctor.md): `pc` (an x86 machine: no
MediaTek board is one), `emulated` (an Arm system under QEMU) or `board`; and whether the Neuron runtime it loaded
is MediaTek's (`real`), a test's `stand-in`, or none at all (`none`). That is a report, never a switch: nothing
in the product takes another path for a stand-in.

Stdlib only, and self-contained: the doctor runs this file's text with the board's Python before any runner is
deployed. An emulation is told by what QEMU leaves visible: a `QEMU_CPU` variable (user-mode emulation), a
/proc/cpuinfo naming QEMU or an x86 vendor under an Arm machine (user-mode again: cpuinfo is the host's), the DMI
vendor QEMU, or the device tree of QEMU's `virt` machine (`linux,dummy-virt`). A stand-in library announces itself
with the exported symbol `whisperkv_standin`, or by the version 0.0.1 (no real runtime is that old).
"""
from __future__ import annotations

import os
import platform

from device.spec.board_files import read_text
from device.spec.neuron_paths import version_of

PC_ARCHES = ("x86_64", "amd64", "i386", "i686")
EMULATION_SIGNS = (("/proc/cpuinfo", "qemu"), ("/sys/class/dmi/id/sys_vendor", "qemu"),
                   ("/sys/class/dmi/id/product_name", "qemu"), ("/proc/device-tree/compatible", "dummy-virt"),
                   ("/sys/firmware/devicetree/base/compatible", "dummy-virt"))
STANDIN_SYMBOL = "whisperkv_standin"
STANDIN_VERSION = "0.0.1"


def _text(path: str) -> str:
    return read_text(path, 65536).lower()


def runner_kind(machine: str | None = None) -> str:
    """`pc`, `emulated` or `board`, from what this system shows of itself."""
    machine = (machine or platform.machine()).lower()
    if machine in PC_ARCHES:
        return "pc"
    if os.environ.get("QEMU_CPU") or any(sign in _text(path) for path, sign in EMULATION_SIGNS):
        return "emulated"
    cpuinfo = _text("/proc/cpuinfo")
    if "genuineintel" in cpuinfo or "authenticamd" in cpuinfo:
        return "emulated"
    return "board"


def library_kind(lib) -> str:
    """`stand-in` or `real` for a loaded ctypes library (a CDLL)."""
    return "stand-in" if hasattr(lib, STANDIN_SYMBOL) or version_of(lib) == STANDIN_VERSION else "real"


def npu_kind(backend) -> str:
    """hello's `npu`: the Neuron runtime a backend loaded (`lib.lib`, device/runner/neuron/neuron_runtime.py), else none."""
    lib = getattr(getattr(backend, "lib", None), "lib", None)
    return "none" if lib is None else library_kind(lib)
