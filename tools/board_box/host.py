"""What the PC must offer the box: root, qemu's binfmt handler, the apt mirror, a cache directory."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

BINFMT = Path("/proc/sys/fs/binfmt_misc")
SUITE = "bookworm"
# Environment a chroot'ed command sees: nothing of the PC's (REQUESTS_CA_BUNDLE, PIP_FIND_LINKS, ... would
# point at files the box has not got).
QEMU_CPU = "neoverse-n1"     # qemu's default CPU model makes OpenBLAS raise spurious floating-point warnings
CLEAN_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
             "LANG": "C.UTF-8", "QEMU_CPU": QEMU_CPU, "DEBIAN_FRONTEND": "noninteractive"}


class Missing(Exception):
    """A capability the PC lacks: one line for the user, exit status 2."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "whisperkv" / "board-in-a-box"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def chroot(root: Path, cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["chroot", str(root), *cmd], check=True, env=CLEAN_ENV, **kw)


def require_root() -> None:
    if os.geteuid() != 0:
        raise Missing("root is needed (chroot, mounts, debootstrap): run it with sudo")


def require_tools(names: tuple[str, ...]) -> None:
    lacking = [n for n in names if shutil.which(n) is None]
    if lacking:
        raise Missing(f"missing {', '.join(lacking)}: apt-get install qemu-user-static debootstrap binfmt-support "
                      "openssh-client zstd gcc-aarch64-linux-gnu libc6-dev-arm64-cross")


def enable_binfmt() -> None:
    """Mount binfmt_misc if it is not, and register qemu-aarch64 so the kernel runs arm64 binaries through qemu."""
    if not (BINFMT / "register").exists():
        r = subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)], capture_output=True, text=True)
        if r.returncode != 0:
            raise Missing(f"binfmt_misc cannot be mounted here ({r.stderr.strip() or 'mount failed'}): the box needs "
                          "the kernel's binfmt_misc to run arm64 binaries")
    if not (BINFMT / "qemu-aarch64").exists():
        r = subprocess.run(["update-binfmts", "--enable", "qemu-aarch64"], capture_output=True, text=True)
        if r.returncode != 0 or not (BINFMT / "qemu-aarch64").exists():
            raise Missing(f"qemu-aarch64 cannot be registered with binfmt_misc ({r.stderr.strip()}): "
                          "apt-get install qemu-user-static binfmt-support")


def apt_mirror() -> str:
    """The Debian mirror the PC's apt uses for the main archive (deb822 or one-line sources)."""
    texts = [p.read_text() for p in sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))]
    for text in texts:
        for stanza in text.split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:(.*)$", stanza, re.M)
            if uris and suites and SUITE in suites.group(1).split() and "security" not in uris.group(1):
                return uris.group(1)
    lists = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]
    for p in lists:
        if p.is_file():
            m = re.search(rf"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+{SUITE}\s", p.read_text(), re.M)
            if m:
                return m.group(1)
    return "http://deb.debian.org/debian"


def extra_ca_certs() -> list[Path]:
    """The PC's own CA certificates (a TLS-intercepting proxy's, for one), which pip in the box needs too."""
    return sorted(Path("/usr/local/share/ca-certificates").glob("**/*.crt"))
