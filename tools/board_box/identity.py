"""What the box says about itself: an arm64 /proc/cpuinfo and a small sysfs that names an MT8371.

These are files this tool writes, a stand-in for the board's: the device tree's `compatible`, the SoC's
`/sys/devices/soc0` attributes and two thermal zones whose temperatures the tests raise at will.
`/proc/device-tree` cannot be made inside the PC's procfs, so the runner also reads /sys/firmware/devicetree.
"""
from __future__ import annotations

import os
from pathlib import Path

# The MT8189 family's compatible strings as the Linux device trees spell them (vendor,board then vendor,soc).
COMPATIBLE = ("mediatek,mt8371-evk", "mediatek,mt8371", "mediatek,mt8189")
SOC0 = {"family": "MediaTek", "machine": "MediaTek MT8371 board-in-a-box (stand-in)", "soc_id": "MT8371",
        "revision": "0"}
# Millidegrees, as the kernel writes them. Zone 0 passes its passive trip point (the throttle mark) at 85 C.
ZONES = (("soc_max", 45000, ((85000, "passive"), (105000, "critical"))),
         ("cpu_little", 43000, ((85000, "passive"), (105000, "critical"))))


def fake_cpuinfo(cores: int | None = None) -> str:
    """An arm64 cpuinfo for qemu's Neoverse N1 model (LiteRT crashes reading the PC's x86 one). As many
    processors as the PC lends the emulation, not the board's eight."""
    n = cores or os.cpu_count() or 1
    block = ("processor\t: {i}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics "
             "fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\n"
             "CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n")
    return "".join(block.format(i=i) for i in range(n))


def write_sysfs(sys_root: Path) -> None:
    """Fill an empty tmpfs mounted at the box's /sys."""
    dt = sys_root / "firmware/devicetree/base"
    dt.mkdir(parents=True)
    (dt / "compatible").write_bytes(b"".join(c.encode() + b"\0" for c in COMPATIBLE))
    (dt / "model").write_bytes(b"MediaTek MT8371 board-in-a-box (stand-in)\0")
    soc = sys_root / "devices/soc0"
    soc.mkdir(parents=True)
    for name, value in SOC0.items():
        (soc / name).write_text(value + "\n")
    for i, (kind, temp, trips) in enumerate(ZONES):
        z = sys_root / f"class/thermal/thermal_zone{i}"
        z.mkdir(parents=True)
        (z / "type").write_text(kind + "\n")
        (z / "temp").write_text(f"{temp}\n")
        for j, (t, ttype) in enumerate(trips):
            (z / f"trip_point_{j}_temp").write_text(f"{t}\n")
            (z / f"trip_point_{j}_type").write_text(ttype + "\n")
    cpu = sys_root / "devices/system/cpu"
    cpu.mkdir(parents=True)
    n = os.cpu_count() or 1
    (cpu / "online").write_text(f"0-{n - 1}\n" if n > 1 else "0\n")
    (cpu / "possible").write_text(f"0-{n - 1}\n" if n > 1 else "0\n")


def set_temperature(sys_root: Path, zone: int, millideg: int) -> None:
    """What a test does to heat the box: one zone's temperature, written as the kernel would."""
    (sys_root / f"class/thermal/thermal_zone{zone}/temp").write_text(f"{millideg}\n")
