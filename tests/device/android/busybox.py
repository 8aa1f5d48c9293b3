"""The STAND-IN Android board's shell: Debian's arm64 busybox-static, a STAND-IN for Android's toybox and mksh.

Fetched once with apt's own client (`apt-get download`, its arm64 package index kept in a folder of its own, so the
PC's apt is left as it is) and kept in the user cache under its package's name. Where that fails, an x86-64
busybox-static installed on the PC is the fallback: it runs natively in the chroot, so the shell says x86_64.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

PACKAGE = "busybox-static"
# toybox's applets on Android 14 that the board offers (and busybox has): what adb's shell finds on PATH there
APPLETS = ("sh", "awk", "basename", "cat", "chmod", "cp", "cut", "date", "dd", "df", "dirname", "du", "echo", "env",
           "expr", "false", "find", "free", "grep", "gzip", "head", "id", "kill", "ln", "ls", "md5sum", "mkdir",
           "mktemp", "mv", "nproc", "od", "printf", "ps", "pwd", "readlink", "realpath", "rm", "rmdir", "sed", "seq",
           "sha1sum", "sha256sum", "sleep", "sort", "stat", "tail", "tar", "tee", "test", "timeout", "touch", "tr",
           "true", "uname", "uniq", "uptime", "wc", "which", "xargs")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "whisperkv" / "android-board"


def _apt(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    for d in ("lists/partial", "cache/archives/partial"):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    settings = ("APT::Architecture=arm64", "APT::Architectures::=arm64", "APT::Sandbox::User=root",
                f"Dir::State::Lists={tmp}/lists", f"Dir::Cache={tmp}/cache", "Dir::State::status=/dev/null")
    opts = [part for s in settings for part in ("-o", s)]
    return subprocess.run(["apt-get", "-q", *opts, *args], cwd=tmp, capture_output=True, text=True, timeout=300)


def fetch(out_dir: Path) -> Path | None:
    """arm64 busybox from Debian's busybox-static, into `out_dir` named after the package's file; None on failure."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="android-busybox-") as t:
        tmp = Path(t)
        if _apt(tmp, "update").returncode != 0 or _apt(tmp, "download", PACKAGE).returncode != 0:
            return None
        (deb,) = tmp.glob(f"{PACKAGE}_*_arm64.deb")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp / "x")], check=True)
        out_dir.mkdir(parents=True, exist_ok=True)
        out = out_dir / deb.name.replace(".deb", ".busybox")
        part = out.with_suffix(f".part{os.getpid()}")       # two test workers may fetch it at once
        shutil.copy2(tmp / "x/bin/busybox", part)
        part.rename(out)
        return out


def path() -> tuple[Path, str]:
    """(the busybox binary, the arch it runs as): the cached arm64 one, fetched first if need be, else the PC's."""
    cached = sorted(cache_dir().glob(f"{PACKAGE}_*_arm64.busybox"))
    found = cached[-1] if cached else fetch(cache_dir())
    if found is not None:
        return found, "aarch64"
    local = shutil.which("busybox")
    headers = subprocess.run(["readelf", "-l", local], capture_output=True, text=True).stdout if local else ""
    if "LOAD" in headers and "INTERP" not in headers:     # static: it needs no libraries in the chroot
        return Path(local), "x86_64"
    raise RuntimeError("no busybox for the STAND-IN Android board: arm64 busybox-static could not be fetched with "
                       "apt-get and none is installed (Debian: apt-get install busybox-static)")
