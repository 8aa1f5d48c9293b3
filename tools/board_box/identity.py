"""What the box says about itself: an arm64 /proc/cpuinfo and a small sysfs that names an MT8371.

These are files this tool writes, a stand-in for the board's: the device tree's `compatible`, the SoC's
`/sys/devices/soc0` attributes, the eight cores' cpuinfo and CPU lists, the memory, and two thermal zones whose
temperatures the tests raise at will.
`/proc/device-tree` cannot be made inside the PC's procfs, so the runner also reads /sys/firmware/devicetree.
"""
from __future__ import annotations

from pathlib import Path

# The MT8189 family's compatible strings as the Linux device trees spell them (vendor,board then vendor,soc).
COMPATIBLE = ("mediatek,mt8371-evk", "mediatek,mt8371", "mediatek,mt8189")
SOC0 = {"family": "MediaTek", "machine": "MediaTek MT8371 board-in-a-box (stand-in)", "soc_id": "MT8371",
        "revision": "0"}
# Millidegrees, as the kernel writes them. Zone 0 passes its passive trip point (the throttle mark) at 85 C.
ZONES = (("soc_max", 45000, ((85000, "passive"), (105000, "critical"))),
         ("cpu_little", 43000, ((85000, "passive"), (105000, "critical"))))
# The Genio 520 EVK (../shared/NEUROPILOT.md: upstream device-tree patches, a public EVK bring-up): 2x Cortex-A78
# and 6x Cortex-A55, numbered little cores first as MediaTek's big.LITTLE device trees do, and 3.7 GiB.
LITTLE = {"variant": "0x2", "part": "0xd05", "rev": "0"}
BIG = {"variant": "0x1", "part": "0xd41", "rev": "1"}
LITTLE_CORES, CORES = 6, 8
MEM_GIB = 3.7


def cpuinfo() -> str:
    """The Genio 520's eight cores as an arm64 kernel lists them: six Cortex-A55 (part 0xd05), then two
    Cortex-A78 (0xd41). For identity only: qemu emulates a Neoverse N1 with as many CPUs as the PC lends, and
    the runner counts those (os.sched_getaffinity), not these lines. LiteRT crashes reading an x86 cpuinfo."""
    block = ("processor\t: {i}\nBogoMIPS\t: 26.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics "
             "fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
             "CPU variant\t: {variant}\nCPU part\t: {part}\nCPU revision\t: {rev}\n\n")
    return "".join(block.format(i=i, **(LITTLE if i < LITTLE_CORES else BIG)) for i in range(CORES))


def meminfo() -> str:
    """/proc/meminfo with the EVK's 3.7 GiB, where device-info and the runner's sampler read memory."""
    total = round(MEM_GIB * 2**20)
    free = total * 3 // 4
    return "".join(f"{k}:{v:>16} kB\n" for k, v in (("MemTotal", total), ("MemFree", free), ("MemAvailable", free),
                                                     ("Buffers", 0), ("Cached", 0), ("SwapTotal", 0),
                                                     ("SwapFree", 0)))


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
    for name in ("online", "possible", "present"):
        (cpu / name).write_text(f"0-{CORES - 1}\n")


def set_temperature(sys_root: Path, zone: int, millideg: int) -> None:
    """What a test does to heat the box: one zone's temperature, written as the kernel would."""
    (sys_root / f"class/thermal/thermal_zone{zone}/temp").write_text(f"{millideg}\n")
