"""The box's root filesystem, the `genio-520` profile, in two cached tarballs.

A replica of the recorded Genio 520 image as far as Debian's packages allow (../shared/NEUROPILOT.md): the system
Python with NumPy from the distribution (python3-numpy) and pip3, nothing pip-installed for the runner, an sshd
that lets root in with an empty password, the STAND-IN Neuron runtime at its Yocto path (standin.py), and no C
compiler. Two steps, each cached under the cache directory with a hash of what went into it in its name:

- base: debootstrap of Debian 12 arm64 (minutes: every package is configured under emulation);
- genio-520: the base unpacked, the stand-in cross-compiled on the PC and installed, binutils purged; rebuilt
  from the base when the stand-in's sources change, which takes seconds, not a debootstrap.
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tools.board_box import devices, host, standin

PROFILE = "genio-520"
DEBIAN_PACKAGES = ("python3", "python3-numpy", "python3-pip", "ca-certificates", "openssh-server")
PURGED = ("binutils",)      # debootstrap brings binutils (as, ld) for python3.11, which only suggests it
NO_COMPILER = ("cc", "gcc", "c99", "cpp", "g++", "clang", "tcc", "as", "ld")
BASE_FORMAT, FORMAT = 3, 4      # bump when the build steps change


def log(msg: str) -> None:
    print(f"board-in-a-box: {msg}", file=sys.stderr, flush=True)


def _key(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def base_tarball() -> Path:
    return host.cache_dir() / f"base-{host.SUITE}-arm64-{_key(BASE_FORMAT, host.SUITE, DEBIAN_PACKAGES)}.tar.zst"


def tarball() -> Path:
    key = _key(FORMAT, base_tarball().name, PURGED, standin.BUILDS, standin.NATIVE_DEFINES, standin.HEADERS,
               standin.sources_hash())
    return host.cache_dir() / f"rootfs-{PROFILE}-{key}.tar.zst"


def _fresh(work: Path) -> Path:
    if work.exists():
        for point in sorted(_mounted(work), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], check=False)
        shutil.rmtree(work)
    root = work / "root"
    root.mkdir(parents=True)
    return root


def _mounted(under: Path) -> list[str]:
    prefix = str(under.resolve())
    return [p for p in (line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines())
            if p.startswith(prefix + "/")]


def _pack(root: Path, out: Path) -> None:
    log(f"packing {out}")
    part = out.with_suffix(".part")
    host.run(["tar", "--numeric-owner", "-I", "zstd -T0 -3", "-C", str(root), "-cf", str(part), "."])
    part.rename(out)


def build_base(out: Path) -> dict[str, float]:
    t = time.monotonic()
    work = out.parent / "build-base"
    root = _fresh(work)
    mirror = host.apt_mirror()
    log(f"debootstrap {host.SUITE} arm64 from {mirror} (minutes: every package is configured under emulation)")
    host.run(["debootstrap", "--arch=arm64", "--variant=minbase", "--include=" + ",".join(DEBIAN_PACKAGES),
              host.SUITE, str(root), mirror], stdout=subprocess.DEVNULL, env=host.CLEAN_ENV)
    for crt in host.extra_ca_certs():
        dest = root / "usr/local/share/ca-certificates" / crt.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(crt, dest)
    with _mounts(root):
        host.chroot(root, ["update-ca-certificates"], stdout=subprocess.DEVNULL)
        host.chroot(root, ["apt-get", "clean"])
    times = {"debootstrap": time.monotonic() - t}
    t = time.monotonic()
    _pack(root, out)
    shutil.rmtree(work)
    times["pack_base"] = time.monotonic() - t
    return times


def build(base: Path, out: Path) -> dict[str, float]:
    """The base unpacked, the stand-in installed, binutils purged, root's password emptied, packed."""
    t = time.monotonic()
    work = out.parent / "build"
    root = _fresh(work)
    host.run(["tar", "--numeric-owner", "-I", "zstd -T0", "-C", str(root), "-xpf", str(base)])
    with _mounts(root):
        log(f"the stand-in Neuron runtime: {', '.join(lib for lib, _ in standin.BUILDS)}, {standin.NATIVE_LIB}")
        standin.install(root)
        log(f"apt-get purge {' '.join(PURGED)}: no compiler, assembler or linker on the board")
        host.chroot(root, ["apt-get", "purge", "-y", "-q", "--auto-remove", *PURGED], stdout=subprocess.DEVNULL)
        left = host.chroot(root, ["sh", "-c", "for c in " + " ".join(NO_COMPILER) + "; do command -v $c; done; true"],
                           capture_output=True, text=True).stdout.split()
        if left:
            raise host.Missing(f"the compiler was not fully purged from the box: {', '.join(left)}")
        host.chroot(root, ["python3", "-c", "import numpy"])
        host.chroot(root, ["passwd", "-d", "root"], stdout=subprocess.DEVNULL)   # the image's empty root password
        host.chroot(root, ["apt-get", "clean"])
    for lists in (root / "var/lib/apt/lists").glob("*_Packages"):
        lists.unlink()
    times = {"standin": time.monotonic() - t}
    t = time.monotonic()
    _pack(root, out)
    shutil.rmtree(work)
    times["pack"] = time.monotonic() - t
    return times


class _mounts:
    """proc with the board's cpuinfo (LiteRT reads it) and a private /dev, for the steps run in the chroot."""

    def __init__(self, root: Path):
        self.root = root

    def __enter__(self):
        devices.mount_proc(self.root, self.root.parent)
        devices.mount_dev(self.root)

    def __exit__(self, *exc):
        for point in sorted(_mounted(self.root), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], check=False)


def ensure() -> tuple[Path, dict[str, float]]:
    """The cached genio-520 tarball, built first (and its base before it) if missing; stale ones removed."""
    out = tarball()
    if out.is_file():
        return out, {}
    out.parent.mkdir(parents=True, exist_ok=True)
    times = {}
    base = base_tarball()
    if not base.is_file():
        times.update(build_base(base))
    times.update(build(base, out))
    for old in out.parent.glob("*.tar.zst"):
        if old not in (out, base):
            old.unlink()
    return out, times


def extract(tar: Path, root: Path) -> float:
    t = time.monotonic()
    root.mkdir(parents=True)
    host.run(["tar", "--numeric-owner", "-I", "zstd -T0", "-C", str(root), "-xpf", str(tar)])
    return time.monotonic() - t
