"""C built for Android arm64 (bionic, API 23) with Debian's aarch64-linux-gnu-gcc and no NDK (issue 54).

How, as ../shared/android-bionic/README.md found it: a dynamic bionic PIE (interpreter /system/bin/linker64), compiled
freestanding against one in-tree header of bionic's declarations (bionic/libc.h, staged under every standard header
name the sources include) and gcc's own stddef/stdint/stdarg, started by bionic/crtbegin.c (the NDK's
crtbegin_dynamic.o's job), and linked with --no-undefined against stub libc.so/libdl.so/libm.so made from
bionic/symbols.txt, so that a glibc-only symbol (__errno_location, __isoc99_sscanf, ...) is a link error.

`build(program)` is the native runner (or another program of native_runner_build.PROGRAMS) for Android, cached as
native_runner_build caches its Linux builds; `compile_bionic` builds any C, an executable or a shared library.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from core.model.file_hash import sha256_files
from device.runner.cache_paths import staged
from device.toolchain import native_runner_inputs as runner_inputs
from device.toolchain.native_runner_inputs import BuildError

FOLDER = Path(__file__).resolve().parent / "bionic"
HEADER = FOLDER / "libc.h"
START = FOLDER / "crtbegin.c"
SYMBOLS = FOLDER / "symbols.txt"
TARGET = runner_inputs.TARGETS["aarch64"]  # the same cross compiler as the glibc build
INTERPRETER = "/system/bin/linker64"
LIBRARIES = ("c", "dl", "m")     # the libraries symbols.txt has stubs for
# Every standard header a source may include, each staged as one line including libc.h.
STANDARD_HEADERS = (
    "ctype.h", "dirent.h", "dlfcn.h", "errno.h", "fcntl.h", "math.h", "pthread.h", "signal.h", "stdio.h", "stdlib.h",
    "string.h", "strings.h", "time.h", "unistd.h", "sys/mman.h", "sys/socket.h", "sys/stat.h", "sys/time.h",
    "sys/types.h", "sys/un.h", "sys/utsname.h")
# gcc's own headers (stddef.h, stdint.h, stdarg.h, stdbool.h) need -ffreestanding, or stdint.h asks for the libc's.
# -fbuiltin undoes -ffreestanding's -fno-builtin, so that sqrtf, fabsf, memcpy, ... compile to the same instructions
# as in the Linux builds the conformance tests check. -fno-stack-protector: Debian's gcc would read the canary where
# glibc keeps it. -mno-outline-atomics: libgcc's atomics helpers call __getauxval, which bionic lacks.
COMPILE_FLAGS = ("-D__ANDROID__", "-ffreestanding", "-fbuiltin", "-nostdinc", "-fno-stack-protector",
                 "-mno-outline-atomics")
# Android 15+ on 16 KiB pages refuses LOAD segments aligned to less; Android 6's linker wants DT_HASH, newer ones
# DT_GNU_HASH.
LINK_FLAGS = ("-nostdlib", "-Wl,--no-undefined", "-Wl,-z,max-page-size=16384", "-Wl,--hash-style=both",
              "-Wl,-z,noexecstack")


@dataclass(frozen=True)
class Symbol:
    name: str
    library: str     # "libc", "libdl" or "libm"
    kind: str        # "function" or "data"


def symbols(path: Path = SYMBOLS) -> list[Symbol]:
    """symbols.txt's entries: each line `LIBRARY KIND NAME`; # starts a comment."""
    out = []
    for line in path.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 3 or words[1] not in ("function", "data") or words[0][3:] not in LIBRARIES:
            raise BuildError(f"{path.name}: {line!r} is not `LIBRARY function|data NAME`",
                             f"fix the line in {path}")
        out.append(Symbol(words[2], words[0], words[1]))
    return out


def compiler() -> str:
    """The cross compiler's path; BuildError with the one-line fix when it is missing."""
    return runner_inputs.compiler_path(TARGET)


def _run(cmd: list[str], what: str) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        done = subprocess.CompletedProcess(cmd, 127, "", str(exc))
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no output"]
        # the first error or unresolved symbol, not collect2's summary of them
        shown = next((ln for ln in lines if ("error" in ln or "undefined reference" in ln)
                      and not ln.startswith("collect2")), lines[-1])
        raise BuildError(f"{what} for Android (bionic) failed: {shown.strip()}", f"see `{' '.join(cmd)}`")


def stage_headers(folder: Path) -> Path:
    """The include folder: libc.h, and each standard header name as a line including it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HEADER, folder / HEADER.name)
    for name in STANDARD_HEADERS:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f'#include "{"../" * name.count("/")}{HEADER.name}"\n')
    return folder


def make_stubs(cc: str, folder: Path) -> dict[str, Path]:
    """libc.so, libdl.so, libm.so carrying bionic's sonames and symbols.txt's names, nothing else: what the build
    links against (the device's own libraries are what run)."""
    folder.mkdir(parents=True, exist_ok=True)
    stubs = {}
    for lib in LIBRARIES:
        name = f"lib{lib}.so"
        lines = [f"void {s.name}(void) {{}}" if s.kind == "function" else f"char {s.name}[8];"
                 for s in symbols() if s.library == f"lib{lib}"]
        source = folder / f"lib{lib}_stub.c"
        source.write_text("\n".join(lines) + "\n")
        stubs[lib] = folder / name
        _run([cc, "-shared", "-fPIC", "-nostdlib", "-fno-builtin", "-w", f"-Wl,-soname,{name}", str(source),
              "-o", str(stubs[lib])], f"making the stub {name}")
    return stubs


def gcc_include(cc: str) -> str:
    """gcc's own header folder (stddef.h, stdint.h, stdarg.h, stdbool.h)."""
    return subprocess.run([cc, "-print-file-name=include"], capture_output=True, text=True).stdout.strip()


def libgcc(cc: str) -> str:
    """libgcc.a, for the compiler's helpers (a long double division, say)."""
    return subprocess.run([cc, "-print-libgcc-file-name"], capture_output=True, text=True).stdout.strip()


def command(cc: str, c_files, out: Path, work: Path, *, shared: bool = False, defines=(), include_dirs=(),
            libs=LIBRARIES, flags=("-O2",)) -> list[str]:
    """The one compile-and-link line; `work` holds the staged headers and the stubs."""
    unknown = [lib for lib in libs if lib not in LIBRARIES]
    if unknown:
        raise BuildError(f"no stub library for {', '.join(unknown)} on the bionic route "
                         f"(it has {', '.join(LIBRARIES)})",
                         f"add its symbols to {SYMBOLS} and its name to bionic_build.LIBRARIES")
    include = stage_headers(work / "include")
    stubs = make_stubs(cc, work / "stubs")
    if shared:
        kind = ["-fPIC", "-shared", f"-Wl,-soname,{out.name}"]
    else:
        kind = ["-fPIE", "-pie", f"-Wl,-dynamic-linker,{INTERPRETER}", str(START)]
    return [cc, *flags, *COMPILE_FLAGS, *[f"-D{d}" for d in defines], "-isystem", gcc_include(cc),
            *[f"-I{d}" for d in include_dirs], "-I", str(include), *kind, *LINK_FLAGS,
            *[str(f) for f in c_files], "-o", str(out), *[str(stubs[lib]) for lib in libs], libgcc(cc)]


def compile_bionic(c_files, out: Path, *, shared: bool = False, defines=(), include_dirs=(), libs=LIBRARIES,
                   flags=("-O2",)) -> Path:
    """Any C for Android arm64: an executable (a PIE started by crtbegin.c) or, with `shared`, a shared library
    whose soname is `out`'s name. `defines` are NAME or NAME=VALUE; `libs` a subset of LIBRARIES. BuildError on a
    missing cross compiler or a failed build (a glibc-only symbol is a link error)."""
    cc = compiler()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bionic-") as work:
        cmd = command(cc, c_files, out, Path(work), shared=shared, defines=defines, include_dirs=include_dirs,
                      libs=libs, flags=flags)
        _run(cmd, f"compiling {', '.join(Path(f).name for f in c_files)}")
    return out


def build_key(files: list[Path], jsmn: Path) -> str:
    """A hash of everything the Android build is made of: the runner's key's parts, the header, the start-up file,
    the symbol list and this route's flags."""
    made_of = [*files, runner_inputs.SPEC_HEADER, jsmn, HEADER, START, SYMBOLS]
    parts = [f"{f.name}:{sha256_files([f])}" for f in made_of]
    flags = " ".join([TARGET.compiler, *runner_inputs.FLAGS, *COMPILE_FLAGS, *LINK_FLAGS, INTERPRETER])
    return hashlib.sha256("\n".join([*parts, flags]).encode()).hexdigest()[:16]


def build(program: str = runner_inputs.NAME) -> Path:
    """The native runner (or another of native_runner_build.PROGRAMS) for Android arm64, compiled unless these
    sources already have one in the user cache; its path."""
    files = runner_inputs.sources(program=program)
    compiler()
    jsmn = runner_inputs.jsmn_header()
    out = runner_inputs.output_path(runner_inputs.ANDROID, build_key(files, jsmn), program=program)
    if out.is_file() and os.access(out, os.X_OK):
        return out
    with staged(out.parent) as tmp:
        jsmn_folder = tmp / "jsmn"
        jsmn_folder.mkdir()
        shutil.copyfile(jsmn, jsmn_folder / "jsmn.h")
        compile_bionic([f for f in files if f.suffix == ".c"], tmp / out.name, flags=runner_inputs.FLAGS,
                       include_dirs=(runner_inputs.SPEC_HEADER.parent, jsmn_folder))
        shutil.rmtree(jsmn_folder)
    return out
