"""What a board says of itself to a plain shell, before anything asks for its Python: `uname`, the files that name
its SoC (the runner's own list, device/spec/soc.py), `getprop` where it exists (Android), /proc/cpuinfo,
/proc/meminfo, /etc/os-release, /dev/apusys*, the thermal zones, each core's maximum frequency, whether the
runner's interpreter is there and its version, and the C library (with `uname -m`, the ABI a native runner needs).
One `sh -c` on the board prints it all as sections; the PC reads them. The doctor's identity rung
(device/doctor/board_probe.py) and `whisperkv device-info` (device/info/info.py) start here, so a board without
Python is still named, on Android by its release, `ro.board.platform` and `ro.product.cpu.abi` ("Android 14 on
MT8189", arm64-v8a, bionic: the native runner's Android build)."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from device.deploy.native_deploy import VERSION_LINE
from device.info import cpu_name
from device.link import android
from device.link.transport import Transport, TransportError
from device.spec import soc as soc_table

# Android's properties: the SoC ones the runner asks (soc.GETPROP), the OS release, the product's name and its ABI.
GETPROPS = tuple(dict.fromkeys((*soc_table.GETPROP, android.RELEASE, "ro.product.model", android.CPU_ABI)))
SOC_FILES = soc_table.COMPATIBLE + soc_table.SOC0
MARK = "@@"
# POSIX sh, as Yocto's, Debian's and Android's (mksh and toybox) shells run it. WHISPERKV_SOC_ROOT: where a replica
# board or a test keeps the files that name its SoC, as the runner reads them (device/spec/soc.py).
SCRIPT = "\n".join((
    'r="${WHISPERKV_SOC_ROOT%/}"',
    f'echo "{MARK}uname"; uname -s; uname -r; uname -m',
    f'for f in {" ".join(SOC_FILES)}; do echo "{MARK}file $f"; tr "\\000" " " < "$r$f" 2>/dev/null; echo; done',
    f'if command -v getprop >/dev/null 2>&1; then for p in {" ".join(GETPROPS)}; do echo "{MARK}getprop $p"; '
    'getprop "$p"; done; fi',
    f'echo "{MARK}cpuinfo"; cat /proc/cpuinfo 2>/dev/null',
    f'echo "{MARK}meminfo"; cat /proc/meminfo 2>/dev/null',
    f'echo "{MARK}os-release"; cat /etc/os-release 2>/dev/null',
    f'echo "{MARK}apusys"; ls -d /dev/apusys* 2>/dev/null',
    f'echo "{MARK}thermal"; for z in /sys/class/thermal/thermal_zone*; do [ -r "$z/type" ] && cat "$z/type"; done',
    f'echo "{MARK}cpufreq"; for c in /sys/devices/system/cpu/cpu[0-9]*; do [ -d "$c" ] && '
    'echo "${c##*/} $(cat "$c/cpufreq/cpuinfo_max_freq" 2>/dev/null)"; done',
    f'echo "{MARK}python"; command -v "$1" 2>/dev/null && "$1" -c {shlex.quote(VERSION_LINE)} 2>/dev/null',
    f'echo "{MARK}libc"; getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>&1 | head -n 1; echo "{MARK}end"',
))


@dataclass
class ShellFacts:
    """The board as its shell shows it; what it does not show is None (lists: empty)."""

    os: str | None = None
    os_id: str | None = None
    android: str | None = None           # Android's release (getprop answers only there)
    board_platform: str | None = None    # Android's ro.board.platform, e.g. mt6989
    product: str | None = None
    kernel: str | None = None
    arch: str | None = None
    cpu: str | None = None
    cpu_count: int | None = None
    cores: list = field(default_factory=list)          # [{"part", "max_mhz", "count"}]
    mem_total_mb: int | None = None
    mem_free_mb: int | None = None
    thermal_zones: list = field(default_factory=list)
    soc: dict = field(default_factory=dict)            # device/spec/soc.py's record
    apusys: list = field(default_factory=list)
    python: str | None = None                          # where the runner's interpreter is, None: not there
    python_version: str | None = None                  # its version, None: none answered
    libc: str | None = None                            # "glibc 2.39", "musl", "bionic" (Android), None: unsaid
    cpu_abi: str | None = None                         # Android's ro.product.cpu.abi, e.g. arm64-v8a

    @property
    def abi(self) -> str | None:
        """The CPU architecture and C library a native program must be built for: "aarch64, glibc 2.39", on Android
        "aarch64, bionic (arm64-v8a)"."""
        abi = ", ".join(filter(None, (self.arch, self.libc))) or None
        return f"{abi} ({self.cpu_abi})" if abi and self.cpu_abi else abi or self.cpu_abi

    @property
    def os_name(self) -> str | None:
        """The OS as device-info and the doctor name it: "Android 14 on MT8189" (getprop), else os-release's."""
        return android.os_name(self.android, self.board_platform) or self.os


def sections(text: str) -> dict[str, str]:
    """The script's output as {section: its text}."""
    out, name, lines = {}, None, []
    for line in text.splitlines():
        if line.startswith(MARK):
            if name is not None:
                out[name] = "\n".join(lines).strip()
            name, lines = line[len(MARK):].strip(), []
        elif name is not None:
            lines.append(line)
    if name is not None:
        out[name] = "\n".join(lines).strip()
    return out


def pick_soc(found: dict[str, str]) -> dict:
    """soc.board_soc's choice over what the shell read: the first source naming an SoC the table knows, else the
    first MTxxxx seen, else unknown; getprop counts only when no file names anything."""
    files = [(p, found.get(f"file {p}", "").strip()) for p in SOC_FILES]
    props = [(f"getprop {p}", found.get(f"getprop {p}", "").strip()) for p in soc_table.GETPROP]
    first = None
    for where, text in files + (props if not any(t for _, t in files) else []):
        for name in soc_table.soc_names(text):
            if name in soc_table.SOCS:
                return soc_table.describe(name, where, text)
            first = first or (name, where, text)
    return soc_table.describe(*first) if first else soc_table.describe(None)


def cores(cpuinfo: str, cpufreq: str) -> list[dict]:
    """Cores by type and maximum frequency: the CPU part (or model name) of each processor, grouped."""
    parts, cpu = {}, None
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            cpu = value
        elif cpu is not None and key in ("CPU part", "model name"):
            parts[cpu] = value
    listed = [ln.split() for ln in cpufreq.splitlines() if re.fullmatch(r"cpu\d+", (ln.split() or [""])[0])]
    groups: dict = {}
    for row in listed or [[f"cpu{n}"] for n in parts]:
        khz = row[1] if len(row) > 1 and row[1].isdigit() else ""
        key = (parts.get(row[0][3:], "?"), int(khz) // 1000 if khz else None)
        groups[key] = groups.get(key, 0) + 1
    return [{"part": p, "max_mhz": mhz, "count": c} for (p, mhz), c in sorted(groups.items(), key=str)]


def libc_of(text: str) -> str | None:
    """getconf's "glibc 2.39", or ldd's first line: glibc's version, or musl."""
    found = re.search(r"(?:glibc|GLIBC|GNU libc)\D*?(\d+\.\d+)", text)
    if found:
        return f"glibc {found.group(1)}"
    return "musl" if "musl" in text else None


def facts(text: str) -> ShellFacts:
    """The script's output read."""
    s = sections(text)
    uname = s.get("uname", "").splitlines() + [""] * 3
    osr = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', s.get("os-release", ""), re.M))
    mem = dict(re.findall(r"^(\w+):\s+(\d+) kB", s.get("meminfo", ""), re.M))
    cpuinfo = s.get("cpuinfo", "")
    found = cores(cpuinfo, s.get("cpufreq", ""))
    python = s.get("python", "").splitlines() + [""] * 2
    release = android.release(s.get(f"getprop {android.RELEASE}", ""))
    return ShellFacts(
        os=osr.get("PRETTY_NAME") or uname[0] or None, os_id=osr.get("ID"),
        android=release, board_platform=s.get(f"getprop {android.PLATFORM}") or None,
        product=s.get("getprop ro.product.model") or None, cpu_abi=s.get(f"getprop {android.CPU_ABI}") or None,
        kernel=uname[1] or None, arch=uname[2] or None, cpu=cpu_name.cpu_name(cpuinfo) or None,
        cpu_count=sum(g["count"] for g in found) or None, cores=found,
        mem_total_mb=int(mem["MemTotal"]) // 1024 if "MemTotal" in mem else None,
        mem_free_mb=int(mem.get("MemAvailable", mem.get("MemFree", 0))) // 1024 if mem else None,
        thermal_zones=s.get("thermal", "").splitlines(), soc=pick_soc(s), apusys=s.get("apusys", "").split(),
        python=python[0] or None, python_version=python[1] if re.fullmatch(r"\d+\.\d+\.\d+", python[1]) else None,
        libc="bionic" if release else libc_of(s.get("libc", "")))


def shell_facts(transport: Transport, python: str | None = None) -> ShellFacts:
    """Ask the board's shell; `python`: the interpreter whose presence to check (default: the transport's)."""
    res = transport.run(["sh", "-c", SCRIPT, "sh", python or transport.python], timeout=60)
    if f"{MARK}uname" not in res.text:
        said = res.stderr.decode(errors="replace").strip() or f"exit status {res.rc}"
        raise TransportError(f"no shell answers on {transport.label}: {said}",
                             "check that the device is reachable and its login shell is sh-compatible")
    return facts(res.text)
