"""The C step's library (native_step.c, its interface in native_step.h): built here with the system's C compiler,
loaded through ctypes, and checked against what the Python side expects before anything is called.

The library is compiled on first use for this CPU (-march=native, AVX-512) and kept under cache_home()/native/ with
a key of its source, its header, the compiler and the CPU, so a later start only loads it. At load the library
reports its ABI version and the sizes of its structs; a mismatch with device/runner/native/step.py's ctypes mirror
is a clear error, never a crash inside the step.
"""
from __future__ import annotations

import ctypes as C
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from core.errors import ModelError
from device.runner.cache_paths import cache_home, staged

log = logging.getLogger("whisperkv.agent")

HERE = Path(__file__).parent
SOURCE, HEADER = HERE / "native_step.c", HERE / "native_step.h"
ABI_VERSION = 1      # WKV_ABI_VERSION in native_step.h
NAME = "libwhisperkv_step.so"
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fopenmp", "-shared", "-fPIC")
CPU_FEATURES = ("avx512f",)
INSTALL_FIX = ("install a C compiler with OpenMP (Debian: apt-get install gcc), or use --backend onnx (exact) or "
               "onnx-int8b (faster, may differ)")


@functools.lru_cache(maxsize=None)
def _cpu_flags() -> frozenset[str]:
    # Read once a process: every backend lookup asks (available_backends), and the CPU does not change.
    try:
        line = next(l for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("flags"))
    except (OSError, StopIteration):
        return frozenset()
    return frozenset(line.split(":", 1)[1].split())


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def unsupported() -> tuple[str, str] | None:
    """(why, fix) when this machine cannot build and run the step (the registry's probe); None when it can:
    Linux on x86-64 with AVX-512, and a C compiler."""
    if (platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")
            and set(CPU_FEATURES) <= _cpu_flags() and compiler() is not None):
        return None
    return "backend 'native-int8b' needs Linux on x86-64 with AVX-512 and a C compiler", INSTALL_FIX


def supported() -> bool:
    return unsupported() is None


@functools.lru_cache(maxsize=None)
def _key(cc: str) -> str:
    try:
        version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    except OSError:
        version = []
    return hashlib.sha256("\n".join([SOURCE.read_text(), HEADER.read_text(), " ".join(FLAGS), cc, *version,
                                     " ".join(sorted(_cpu_flags()))]).encode()).hexdigest()[:16]


def library_path(cache_root: Path) -> Path:
    """Where the library for this source, compiler and CPU is (or will be) kept."""
    return cache_root / "native" / _key(compiler() or "cc") / NAME


def ready() -> bool:
    """Whether the library is built here, or builds now (`auto` asks: a compiler that fails makes it pick the
    next backend, with a warning, where asking for native-int8b by name gets the error)."""
    if not supported():
        return False
    try:
        build_library(cache_home())
    except ModelError as exc:
        log.warning("native-int8b is unavailable, %s (%s)", exc, exc.fix)
        return False
    return True


def build_library(cache_root: Path) -> Path:
    """Compile native_step.c unless this source, compiler and CPU already have a library; its path."""
    if not supported():
        raise ModelError(*unsupported())
    path = library_path(cache_root)
    if path.is_file():
        return path
    try:
        return _compile(path.parent)
    except OSError:              # a read-only cache: built for this process alone
        return _compile(Path(tempfile.mkdtemp(prefix="whisperkv-native-")))


def _compile(directory: Path) -> Path:
    with staged(directory, merge=True) as tmp:
        cmd = [compiler(), *FLAGS, str(SOURCE), "-o", str(tmp / NAME), "-lm"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            done = subprocess.CompletedProcess(cmd, 127, "", str(exc))
        if done.returncode != 0:
            raise ModelError(f"compiling the native step failed: {done.stderr.strip()[-400:]}", INSTALL_FIX)
    return directory / NAME


def open_library(path: Path, sizes: dict[str, int]) -> C.CDLL:
    """The library at `path`, once its ABI version and the sizes of its structs (`sizes`: name -> the ctypes
    mirror's size) match what the Python side was written for."""
    lib = C.CDLL(str(path))
    try:
        lib.wkv_abi_version.restype = C.c_int
        version = lib.wkv_abi_version()
        reported = {}
        for name in sizes:
            getattr(lib, f"wkv_sizeof_{name}").restype = C.c_size_t
            reported[name] = getattr(lib, f"wkv_sizeof_{name}")()
    except AttributeError:
        version, reported = None, {}
    if version != ABI_VERSION or reported != sizes:
        raise ModelError(f"the native step library {path} does not match this runner (ABI {version}, struct sizes "
                         f"{reported}; expected ABI {ABI_VERSION}, {sizes})",
                         f"delete {path.parent} so that it is built again from this runner's source")
    return lib
