"""The CPU's name from /proc/cpuinfo, as lscpu gives it: an x86 `model name`, or an Arm board's cores named
from their `CPU implementer` and `CPU part` (arm64 kernels print no model name).

Stdlib only and no __future__ import: device-info sends this file's text ahead of its probe, which runs with
the board's own Python before any runner is deployed.
"""
import re

# Arm Ltd's 64-bit cores (implementer 0x41) by MIDR part number, as util-linux's lscpu names them
# (sys-utils/lscpu-arm.c). A part missing here is reported by its number, never guessed.
ARM_PARTS = {
    0xd02: "Cortex-A34", 0xd03: "Cortex-A53", 0xd04: "Cortex-A35", 0xd05: "Cortex-A55", 0xd06: "Cortex-A65",
    0xd07: "Cortex-A57", 0xd08: "Cortex-A72", 0xd09: "Cortex-A73", 0xd0a: "Cortex-A75", 0xd0b: "Cortex-A76",
    0xd0c: "Neoverse-N1", 0xd0d: "Cortex-A77", 0xd0e: "Cortex-A76AE", 0xd40: "Neoverse-V1", 0xd41: "Cortex-A78",
    0xd42: "Cortex-A78AE", 0xd43: "Cortex-A65AE", 0xd44: "Cortex-X1", 0xd46: "Cortex-A510", 0xd47: "Cortex-A710",
    0xd48: "Cortex-X2", 0xd49: "Neoverse-N2", 0xd4a: "Neoverse-E1", 0xd4b: "Cortex-A78C", 0xd4c: "Cortex-X1C",
    0xd4d: "Cortex-A715", 0xd4e: "Cortex-X3", 0xd4f: "Neoverse-V2", 0xd80: "Cortex-A520", 0xd81: "Cortex-A720",
    0xd82: "Cortex-X4", 0xd84: "Neoverse-V3", 0xd85: "Cortex-X925", 0xd87: "Cortex-A725",
}
ARM_LTD = 0x41


def _core(implementer: str, part: str) -> str:
    try:
        imp, num = int(implementer, 16), int(part, 16)
    except ValueError:
        return f"implementer {implementer} part {part}"
    if imp == ARM_LTD:
        return ARM_PARTS.get(num, f"Arm part {num:#05x}")
    return f"implementer {imp:#04x} part {num:#05x}"


def cpu_name(cpuinfo: str) -> "str | None":
    """'AMD EPYC 9R14 …' on x86; '2x Cortex-A78 + 6x Cortex-A55' on a big.LITTLE arm64 board (clusters in
    the order the kernel lists them); the `Hardware` line of an older Arm kernel; None when it says nothing."""
    named = re.findall(r"^(?:model name|cpu model)\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    if named:
        return named[-1].strip()
    counts: dict[str, int] = {}
    for block in re.split(r"\n\s*\n", cpuinfo):
        imp = re.search(r"^CPU implementer\s*:\s*(\S+)", block, re.MULTILINE)
        part = re.search(r"^CPU part\s*:\s*(\S+)", block, re.MULTILINE)
        if imp and part:
            core = _core(imp.group(1), part.group(1))
            counts[core] = counts.get(core, 0) + 1
    if counts:
        return " + ".join(f"{n}x {core}" for core, n in counts.items())
    hardware = re.findall(r"^(?:Hardware|Processor)\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    return hardware[-1].strip() if hardware else None
