"""The box's root filesystem: Debian 12 arm64 by debootstrap, plus the runner's venv, cached as one tarball.

The first build takes minutes (debootstrap under emulation); the tarball under the cache directory makes every
later `up` an extraction of seconds. The tarball's name carries a hash of what went into it, so a change to
the package lists builds a new one.
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from tools.board_box import host
from tools.board_box.identity import fake_cpuinfo

DEBIAN_PACKAGES = ("python3", "python3-venv", "python3-pip", "python3-dev", "gcc", "libc6-dev", "ca-certificates",
                   "openssh-server")
VENV = "/opt/whisperkv/venv"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
FORMAT = 1      # bump when the build steps change


def runner_packages() -> list[str]:
    """The `runner` extra of pyproject.toml: the one list of what a board's Python needs."""
    return tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["runner"]


def tarball() -> Path:
    key = repr((FORMAT, host.SUITE, DEBIAN_PACKAGES, runner_packages())).encode()
    return host.cache_dir() / f"rootfs-{host.SUITE}-arm64-{hashlib.sha256(key).hexdigest()[:12]}.tar.zst"


def log(msg: str) -> None:
    print(f"board-in-a-box: {msg}", file=sys.stderr, flush=True)


def build(out: Path) -> dict[str, float]:
    """debootstrap, then the venv, then the tarball; returns each step's seconds."""
    times = {}
    work = out.parent / "build"
    if work.exists():
        shutil.rmtree(work)
    root = work / "root"
    root.mkdir(parents=True)
    mirror = host.apt_mirror()
    t = time.monotonic()
    log(f"debootstrap {host.SUITE} arm64 from {mirror} (minutes: every package is configured under emulation)")
    host.run(["debootstrap", "--arch=arm64", "--variant=minbase", "--include=" + ",".join(DEBIAN_PACKAGES),
              host.SUITE, str(root), mirror], stdout=subprocess.DEVNULL, env=host.CLEAN_ENV)
    times["debootstrap"] = time.monotonic() - t
    t = time.monotonic()
    for crt in host.extra_ca_certs():
        dest = root / "usr/local/share/ca-certificates" / crt.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(crt, dest)
    mounted = []
    try:
        mounted = _mount_for_build(root)
        host.chroot(root, ["update-ca-certificates"], stdout=subprocess.DEVNULL)
        log(f"venv {VENV} with {' '.join(runner_packages())}")
        host.chroot(root, ["python3", "-m", "venv", VENV])
        host.chroot(root, [f"{VENV}/bin/pip", "install", "-q", "--no-cache-dir", "--disable-pip-version-check",
                           *runner_packages()])
        host.chroot(root, [f"{VENV}/bin/python", "-c", "import numpy; "
                           "from ai_edge_litert import interpreter"])
    finally:
        for m in reversed(mounted):
            subprocess.run(["umount", "-l", str(m)], check=False)
    host.chroot(root, ["apt-get", "clean"])
    times["venv"] = time.monotonic() - t
    t = time.monotonic()
    log(f"packing {out}")
    part = out.with_suffix(".part")
    host.run(["tar", "--numeric-owner", "-I", "zstd -T0 -3", "-C", str(root), "-cf", str(part), "."])
    part.rename(out)
    shutil.rmtree(work)
    times["pack"] = time.monotonic() - t
    return times


def _mount_for_build(root: Path) -> list[Path]:
    """proc (with the arm64 cpuinfo LiteRT needs) and /dev, for the venv step."""
    cpuinfo = root.parent / "cpuinfo"
    cpuinfo.write_text(fake_cpuinfo())
    mounts = [(["-t", "proc", "proc"], root / "proc"), (["--bind", str(cpuinfo)], root / "proc/cpuinfo"),
              (["--bind", "/dev"], root / "dev")]
    done = []
    for args, where in mounts:
        host.run(["mount", *args, str(where)])
        done.append(where)
    return done


def ensure() -> tuple[Path, dict[str, float]]:
    """The cached tarball, built first if missing."""
    out = tarball()
    if out.is_file():
        return out, {}
    out.parent.mkdir(parents=True, exist_ok=True)
    return out, build(out)


def extract(tar: Path, root: Path) -> float:
    t = time.monotonic()
    root.mkdir(parents=True)
    host.run(["tar", "--numeric-owner", "-I", "zstd -T0", "-C", str(root), "-xpf", str(tar)])
    return time.monotonic() - t
