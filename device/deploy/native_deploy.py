"""Which runner `whisperkv deploy` ships, and what the native one takes with it.

The Python runner where the board has a Python the runner can use (MIN_PYTHON or newer at ?python=, default python3);
the native runner (the runner in C, device/native_runner/) where it has none, on Android (getprop answers,
device/link/android.py: Android ships no Python), and wherever --runner native or ?runner=native asks for it. The
native runner ships as DIR/bin/whisperkv-runner, built on this PC for the board's CPU
(device/toolchain/native_runner_build.py; on Android its bionic build, device/toolchain/bionic_build.py), beside
DIR/model/: the two .dla graphs of a compiled bundle it drives, its native tables (docs/native-tables.md) and
model.json listing only those. No Python file ships, and the board hashes its files with `sha256sum`
(device/deploy/deploy_record.py)."""
from __future__ import annotations

import re
from pathlib import Path

from core.errors import Fix, Setting, WhisperKVError
from core.model.dims import WINDOWS_S
from device.deploy.board_packages import MIN_PYTHON
from device.link.android import os_name
from device.link.runner_choice import NATIVE, NATIVE_EXE, PYTHON
from device.link.transport import Transport
from device.spec import native_tables
from device.spec.slot_contract import WINDOW_GRAPH

# The board's `uname -m` -> the build that runs there
BUILD_ARCH = {"aarch64": "aarch64", "arm64": "aarch64", "x86_64": "x86_64", "amd64": "x86_64"}
# ... and on Android, arm64 only: bionic's build (a glibc program cannot load the board's bionic Neuron library)
ANDROID_ARCHES = ("aarch64", "arm64")
VERSION_LINE = "import sys; print('%d.%d.%d' % sys.version_info[:3])"
NATIVE_BACKENDS = ("auto", "dla")        # the native runner serves a compiled bundle on the Neuron runtime
# The graphs it drives (device/native_runner/model.c), named after their .tflite by `whisperkv compile` (a shorter
# window's encoder where the bundle has one: encode.c); not the
# step's attention variant, which only the Python runner opens (word timings): a second copy of the step's weights
# that need not cross adb push or SFTP.
NATIVE_GRAPHS = ("encoder.dla", "decoder_step.dla", *(f"{WINDOW_GRAPH % w}.dla" for w in WINDOWS_S[:-1]))
TABLES_FIX = ("export the bundle again (`whisperkv export --format tflite --out DIR`, which writes them), compile it "
              "with `whisperkv compile DIR`, then deploy it")


class NativeDeployError(WhisperKVError):
    code = "deploy"


def python_version(transport: Transport) -> str | None:
    """The version of the board's Python at the transport's interpreter; None when none answers."""
    res = transport.run([transport.python, "-c", VERSION_LINE], timeout=60)
    text = res.text.strip()
    return text if res.rc == 0 and re.fullmatch(r"\d+\.\d+\.\d+", text) else None


def usable(version: str | None) -> bool:
    """A Python the runner runs on: MIN_PYTHON or newer."""
    return version is not None and tuple(int(p) for p in version.split(".")[:2]) >= MIN_PYTHON


def deployed_runner(transport: Transport, asked: str | None, say=lambda line: None) -> str:
    """The runner to ship: the one asked for, else python where the board has a Python the runner can use (else
    native, and `say` tells why)."""
    if asked:
        return asked.lower()
    release = transport.android()
    runner, why = board_runner(transport.python, None if release else python_version(transport), release)
    if runner == NATIVE:
        say(f"{transport.label}: {why}: deploying it")
    return runner


def board_runner(python_at: str | None, version: str | None, android: str | None = None) -> tuple[str, str]:
    """The runner deploy gives a board unasked, and why, from where its Python is and its version (on Android, the
    release: the native runner)."""
    if android:
        return NATIVE, f"{os_name(android)} has no Python the runner can use; the native runner needs none"
    if usable(version):
        return PYTHON, f"Python {version} at {python_at} can run the Python runner"
    least = ".".join(map(str, MIN_PYTHON))
    why = f"Python {version} at {python_at} is older than {least}" if version else f"no Python {least} or newer here"
    return NATIVE, f"{why}; the native runner needs none"


def check_backend(backend: str) -> None:
    if backend not in NATIVE_BACKENDS:
        raise NativeDeployError(f"the native runner serves a compiled bundle on the Neuron runtime (dla), not "
                                f"backend {backend!r}", Fix("deploy with --backend dla, or the Python runner with ",
                                                            Setting("runner", "python")))


def runner_parts(arch: str | None, android: bool = False) -> list[tuple[str, list[Path]]]:
    """The native runner for a board of `arch` (uname -m; `android`: an Android one) as (path under DIR, its source
    on this PC), built now unless it already is."""
    # only a native deploy needs the build: device-info and the link read this module without the toolchain
    # (tests/cli/test_main.py)
    from device.toolchain import native_runner_build

    build = (native_runner_build.ANDROID if arch in ANDROID_ARCHES else None) if android else BUILD_ARCH.get(arch or "")
    if build is None:
        linux = " and ".join(sorted(set(BUILD_ARCH.values()), reverse=True))
        this = f"this {'Android ' if android else ''}one is {arch}" if arch else "this one names no CPU (uname -m)"
        raise NativeDeployError(f"the native runner is built for {linux} Linux boards and aarch64 Android ones; "
                                f"{this}", "use an arm64 Android board (an x86 emulator's image is not served)"
                                if android else Fix("deploy the Python runner: ", Setting("runner", "python")))
    return [(NATIVE_EXE, [native_runner_build.build(build)])]


def ships(name: str) -> bool:
    """A bundle file the native runner reads: the .dla graphs it drives and the native tables (model.json aside)."""
    return name in NATIVE_GRAPHS or name in native_tables.FILES


def check_tables(doc: dict, bundle: Path) -> None:
    """A bundle exported before the native tables existed has none: the native runner cannot read it."""
    if native_tables.MANIFEST_KEY not in doc:
        raise NativeDeployError(f"the bundle at {bundle} has no native tables (its model.json lacks "
                                f"{native_tables.MANIFEST_KEY!r}): it was exported before them", TABLES_FIX)


def make_executable(transport: Transport, root: str) -> None:
    """An upload may drop the file's mode (SFTP, adb push): the runner is made executable on the board."""
    res = transport.run(["chmod", "755", f"{root}/{NATIVE_EXE}"])
    if res.rc != 0:
        raise NativeDeployError(f"cannot make {root}/{NATIVE_EXE} executable on {transport.label}: "
                                f"{res.stderr.decode(errors='replace').strip()}",
                                "check that the deploy folder is on a file system that allows executables")
