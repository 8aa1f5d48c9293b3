"""What a current Android device's linker would refuse in an arm64 executable or library, read from `readelf`:
the checks the old Android 6 libraries of ../shared/android-bionic cannot make when they run it (its README).

`problems(path)` runs readelf; `problems_in(output, allowed)` is the pure part, over readelf's texts.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from device.toolchain.bionic_build import INTERPRETER, symbols
from device.toolchain.native_runner_inputs import BuildError

READELF = ("aarch64-linux-gnu-readelf", "readelf")    # binutils-aarch64-linux-gnu's, else the host's (reads any ELF)
# The libraries an NDK app may link against (developer.android.com/ndk/guides/stable_apis).
NDK_STABLE = frozenset({
    "libc.so", "libm.so", "libdl.so", "liblog.so", "libz.so", "libandroid.so", "libjnigraphics.so", "libEGL.so",
    "libGLESv1_CM.so", "libGLESv2.so", "libGLESv3.so", "libOpenSLES.so", "libOpenMAXAL.so", "libvulkan.so",
    "libmediandk.so", "libcamera2ndk.so", "libnativewindow.so", "libneuralnetworks.so", "libaaudio.so",
    "libsync.so", "libamidi.so", "libbinder_ndk.so", "libstdc++.so"})
# Android 15 devices may use 16 KiB pages (developer.android.com/guide/practices/page-sizes); a LOAD aligned to less
# does not load there. Android 10+ wants PT_TLS aligned to 64 on arm64 (bionic's TLS layout reserves slots).
MIN_LOAD_ALIGN = 16384
MIN_TLS_ALIGN = 64
# readelf's options for each text problems_in reads
VIEWS = {"header": ("-hW",), "program": ("-lW",), "dynamic": ("-dW",), "relocations": ("-rW",),
         "symbols": ("--dyn-syms", "-W"), "versions": ("-VW",)}


def readelf() -> str:
    for name in READELF:
        found = shutil.which(name)
        if found:
            return found
    raise BuildError("no readelf to lint the Android build with",
                     "install it: apt-get install binutils-aarch64-linux-gnu")


def read(path: Path) -> dict[str, str]:
    """readelf's texts of `path`, one per VIEWS key."""
    tool = readelf()
    return {view: subprocess.run([tool, *options, str(path)], capture_output=True, text=True).stdout
            for view, options in VIEWS.items()}


def undefined_symbols(symbols_text: str) -> list[str]:
    """The undefined dynamic symbols' names (without @version) of `readelf --dyn-syms -W`."""
    names = []
    for line in symbols_text.splitlines():
        cols = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(cols) >= 8 and cols[0].rstrip(":").isdigit() and cols[6] == "UND":
            names.append(cols[7].split("@", 1)[0])
    return names


def segments(program_text: str, kind: str) -> list[int]:
    """The alignment of each program header of `kind` (LOAD, TLS) in `readelf -lW`."""
    return [int(line.split()[-1], 16) for line in program_text.splitlines() if line.split()[:1] == [kind]]


def problems_in(out: dict[str, str], allowed: set[str]) -> list[str]:
    """Each thing a current Android would refuse, one line each; [] when none. `out` holds readelf's texts (VIEWS'
    keys), `allowed` the undefined symbols bionic is known to export."""
    found = []
    machine = re.search(r"Machine:\s+(.+)", out["header"])
    if machine is None or machine.group(1).strip() != "AArch64":
        found.append(f"built for {machine.group(1).strip() if machine else 'no machine'}, not arm64 (AArch64)")
    interp = re.search(r"Requesting program interpreter: ([^\]]+)\]", out["program"])
    if "Elf file type is DYN" not in out["program"]:
        found.append("not position-independent (Android runs only PIE executables)")
    if interp is None and "(SONAME)" not in out["dynamic"]:
        found.append(f"no interpreter: not a dynamic executable for {INTERPRETER}")
    elif interp is not None and interp.group(1) != INTERPRETER:
        found.append(f"interpreter {interp.group(1)}, not Android's {INTERPRETER}")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out["dynamic"])
    for lib in needed:
        if lib not in NDK_STABLE:
            found.append(f"NEEDED {lib} is not one of the NDK-stable libraries")
    glibc = sorted(set(re.findall(r"GLIBC_[0-9.]+", out["versions"] + out["symbols"])))
    if glibc:
        found.append(f"references glibc's symbol versions ({', '.join(glibc)})")
    if re.search(r"\(TEXTREL\)|Flags:.*\bTEXTREL\b", out["dynamic"]):
        found.append("has text relocations (TEXTREL)")
    copies = len(re.findall(r"\bR_AARCH64_COPY\b", out["relocations"]))
    if copies:
        found.append(f"has {copies} R_AARCH64_COPY relocation(s)")
    loads = segments(out["program"], "LOAD")
    if not loads:
        found.append("has no LOAD segment")
    small = [a for a in loads if a < MIN_LOAD_ALIGN]
    if small:
        found.append(f"LOAD segment aligned to {min(small)} bytes, less than {MIN_LOAD_ALIGN}")
    if any(a < MIN_TLS_ALIGN for a in segments(out["program"], "TLS")):
        found.append(f"PT_TLS aligned to less than {MIN_TLS_ALIGN}")
    if not re.search(r"\((GNU_)?HASH\)", out["dynamic"]):
        found.append("has neither DT_HASH nor DT_GNU_HASH")
    unknown = sorted({s for s in undefined_symbols(out["symbols"]) if s and s not in allowed})
    if unknown:
        shown = ", ".join(unknown[:8]) + (f" and {len(unknown) - 8} more" if len(unknown) > 8 else "")
        found.append(f"undefined symbols not on bionic's list (device/toolchain/bionic/symbols.txt): {shown}")
    return found


def problems(path: Path) -> list[str]:
    """What a current Android would refuse in the ELF file at `path`; [] when nothing."""
    return problems_in(read(path), {s.name for s in symbols()})
