"""The native runner's build (device/native_runner/, issue 53): its C sources compiled for x86_64 with the system's `cc`
and for aarch64 (glibc) with Debian's cross compiler, into the user cache, again only when a source changes.

One folder, three programs (PROGRAMS): the runner; `neuron-check`, which runs a bundle's encoder and one decoder
step on the Neuron runtime for the tests; and `decode-check`, which answers the tests' questions to the decoding
pieces (the tables, the logit rules, the text). Each is every source but the other programs' `main` files.

`build("aarch64-android")` is the Android build (bionic, no NDK): device/toolchain/bionic_build.py.

The include path holds the spec's generated header (device/spec/whisperkv_spec.h) and a folder with only a copy of
jsmn.h (Debian's libjsmn-dev): a cross compiler must never see the host's /usr/include.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from core.model.file_hash import sha256_files
from device.runner.cache_paths import staged
from device.toolchain import bionic_build
from device.toolchain.native_runner_inputs import (
    ANDROID,
    FLAGS,
    JSMN,
    NAME,
    PROGRAMS,
    SOURCES,
    SPEC_HEADER,
    TARGETS,
    BuildError,
    Target,
    compiler_path,
    jsmn_header,
    output_path,
    sources,
    target,
)

# what callers have always found here
__all__ = ["ANDROID", "FLAGS", "JSMN", "LIBS", "NAME", "PROGRAMS", "SOURCES", "SPEC_HEADER", "TARGETS", "BuildError",
           "Target", "build", "compiler_path", "jsmn_header", "output_path", "sources", "target"]

# dlopen for the Neuron runtime and zlib (glibc before 2.34 keeps it in libdl, and pthread in libpthread)
LIBS = ("-ldl", "-lm", "-lpthread")


def build_key(t: Target, files: list[Path], jsmn: Path) -> str:
    """A hash of everything the binary is made of: each source, the spec header, jsmn.h, the flags, the compiler."""
    parts = [f"{f.name}:{sha256_files([f])}" for f in [*files, SPEC_HEADER, jsmn]]
    return hashlib.sha256("\n".join([*parts, " ".join([t.compiler, *FLAGS, *LIBS])]).encode()).hexdigest()[:16]


def command(cc: str, files: list[Path], include: Path, out: Path) -> list[str]:
    """The compile line: the spec header's folder and a folder with only jsmn.h on the include path."""
    c_files = [str(f) for f in files if f.suffix == ".c"]
    return [cc, *FLAGS, "-I", str(SPEC_HEADER.parent), "-I", str(include), *c_files, "-o", str(out), *LIBS]


def _compile(t: Target, cc: str, files: list[Path], jsmn: Path, out: Path) -> Path:
    with staged(out.parent) as tmp:
        include = tmp / "include"
        include.mkdir()
        shutil.copyfile(jsmn, include / "jsmn.h")
        cmd = command(cc, files, include, tmp / out.name)
        try:
            done = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            done = subprocess.CompletedProcess(cmd, 127, "", str(exc))
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise BuildError(f"compiling the native runner for {t.arch} failed: {last}",
                             f"see `{' '.join(cmd)}`; a source under {SOURCES} does not build")
        shutil.rmtree(include)
    return out


def build(arch: str, program: str = NAME) -> Path:
    """The native runner (or another of PROGRAMS) for `arch` (x86_64, aarch64, or aarch64-android: bionic),
    compiled unless this source already has one; its path."""
    if arch == ANDROID:
        return bionic_build.build(program)
    t = target(arch)
    files = sources(program=program)
    cc = compiler_path(t)
    jsmn = jsmn_header()
    out = output_path(arch, build_key(t, files, jsmn), program=program)
    if out.is_file() and os.access(out, os.X_OK):
        return out
    return _compile(t, cc, files, jsmn, out)
