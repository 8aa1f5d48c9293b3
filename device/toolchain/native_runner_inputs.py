"""What every build of the native runner (device/native_runner/) shares: its folder and programs, the spec's header,
jsmn.h, the compile flags, the compilers and the cache's layout. native_runner_build.py builds it for Linux and
bionic_build.py for Android; both start from here, so that neither imports the other's module back.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from core.errors import WhisperKVError
from device import ROOT
from device.runner.cache_paths import cache_home

SOURCES = ROOT / "device" / "native_runner"
SPEC_HEADER = ROOT / "device" / "spec" / "whisperkv_spec.h"
JSMN = Path("/usr/include/jsmn.h")
NAME = "whisperkv-runner"
PROGRAMS = {NAME: "main.c", "neuron-check": "neuron_check.c",      # each program and its main's file
            "decode-check": "decode_check.c"}
FLAGS = ("-O2", "-fvect-cost-model=dynamic", "-std=c99", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class Target:
    arch: str            # uname -m of the machines it runs on
    compiler: str        # the command
    package: str         # the Debian package that installs it


TARGETS = {
    "x86_64": Target("x86_64", "cc", "gcc"),
    "aarch64": Target("aarch64", "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
}
ANDROID = "aarch64-android"   # built by device/toolchain/bionic_build.py, with the aarch64 cross compiler


class BuildError(WhisperKVError):
    code = "native_runner_build"


def target(arch: str) -> Target:
    if arch not in TARGETS:
        raise BuildError(f"the native runner is built for {', '.join([*TARGETS, ANDROID])}, not {arch!r}",
                         "build it for one of those")
    return TARGETS[arch]


def sources(folder: Path = SOURCES, program: str = NAME) -> list[Path]:
    """The C sources and headers of `program`, in a fixed order: all but the other programs' main files."""
    if program not in PROGRAMS:
        raise BuildError(f"the native runner's folder builds {', '.join(PROGRAMS)}, not {program!r}",
                         "build one of those")
    others = {main for name, main in PROGRAMS.items() if name != program}
    return sorted(p for p in folder.iterdir() if p.suffix in (".c", ".h") and p.name not in others)


def compiler_path(t: Target) -> str:
    """The compiler's path; BuildError naming the Debian package when it is missing."""
    found = shutil.which(t.compiler)
    if found is None:
        raise BuildError(f"no C compiler for {t.arch} ({t.compiler} is not on PATH)",
                         f"install it: apt-get install {t.package}")
    return found


def jsmn_header(path: Path = JSMN) -> Path:
    if not path.is_file():
        raise BuildError(f"the JSON tokenizer's header {path} is missing", "install it: apt-get install libjsmn-dev")
    return path


def output_path(arch: str, key: str, root: Path | None = None, program: str = NAME) -> Path:
    return (root or cache_home()) / "native_runner" / arch / key / program
