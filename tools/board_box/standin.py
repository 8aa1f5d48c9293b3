"""The STAND-IN Neuron runtime inside the box, and the STAND-IN APU beside it on the PC.

MediaTek's runtime cannot exist here (no APU, no NeuroPilot libraries), so the box carries the tests' stand-in
(tests/device/runner/standin/), cross-compiled on the PC for arm64 against the box's own Python headers (there is
no compiler on the box). It is placed where a Genio IoT Yocto image has the real one:
/usr/lib/libneuronusdk_runtime.mtk.so.8.2.16 with its `.so.8` and `.so` links (seen on a Genio 720 image, rity
v26.0; ../shared/NEUROPILOT.md). That build exports the V1 API only, as the one public Whisper runner on an
MT8189-family Yocto board uses; a V1+V2 build sits beside it in /opt/standin/v1v2 for a URL that names it with
`neuron_lib=`. Both hand every graph to the STAND-IN APU (apu.py), a process on the PC that `up` starts and
`down` stops, listening on the box's /run/standin-apu.sock: the runner, its ctypes calls and the library run on
the emulated Arm CPU, and the arithmetic an NPU does on a board runs natively, as the APU is a processor apart
from the CPU. The box has no LiteRT of its own: the runner could not import one, as it could not import
MediaTek's.
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.device.runner.standin import build as standin_build
from tools.board_box import host

HOME = "/opt/standin"
COMPUTE = f"{HOME}/compute"            # neuron_compute.py, apu.py and the C source
APU_SOCKET = "/run/standin-apu.sock"   # in the box's /run, a tmpfs made fresh by every `up`
YOCTO_LIB = "/usr/lib/libneuronusdk_runtime.mtk.so.8.2.16"
YOCTO_LINKS = ("/usr/lib/libneuronusdk_runtime.mtk.so.8", "/usr/lib/libneuronusdk_runtime.mtk.so")
V1V2_LIB = f"{HOME}/v1v2/libneuronusdk_runtime.mtk.so.8"
# (library on the box, the C defines of its build): WITH_V1 alone leaves V2 out; no WITH_* define builds both.
BUILDS = ((YOCTO_LIB, ("WITH_V1",)), (V1V2_LIB, ()))
# The V1 build for the native runner, a process without Python: it starts an interpreter of its own from the box's
# shared libpython (OWN_PYTHON, own_python.c), unpacked into the box for it alone; the runner knows none of this.
NATIVE_LIB = f"{HOME}/native/libneuronusdk_runtime.mtk.so.8"
NATIVE_DEFINES = ("WITH_V1", "OWN_PYTHON")
CROSS_CC = "aarch64-linux-gnu-gcc"     # Debian's gcc-aarch64-linux-gnu, with libc6-dev-arm64-cross
BOX_PYTHON = "python3.11"              # Debian 12's system Python, the box's
HEADERS = f"lib{BOX_PYTHON}-dev"       # its headers, unpacked on the PC, never installed in the box
LIBPYTHON = (f"lib{BOX_PYTHON}", f"{BOX_PYTHON.replace('python', 'libpython')}.so.1.0")   # package, soname
LIBDIR = "/usr/lib/aarch64-linux-gnu"
# Debian 12's sys.path for python3.11, empty entry left out
BOX_PATHS = [f"/usr/lib/{BOX_PYTHON.replace('.', '')}.zip", f"/usr/lib/{BOX_PYTHON}",
             f"/usr/lib/{BOX_PYTHON}/lib-dynload", f"/usr/local/lib/{BOX_PYTHON}/dist-packages",
             "/usr/lib/python3/dist-packages"]


def sources_hash() -> str:
    """A hash of the stand-in's sources: the root filesystem's tarball is rebuilt when they change."""
    h = hashlib.sha256()
    for name in standin_build.SOURCES:
        h.update(name.encode() + b"\0" + (standin_build.HERE / name).read_bytes())
    return h.hexdigest()[:12]


def install(root: Path) -> None:
    """Copy the sources in, cross-compile both builds against the box's Python headers and link the Yocto names."""
    compute = root / COMPUTE.lstrip("/")
    compute.mkdir(parents=True)
    for name in standin_build.SOURCES:
        shutil.copy2(standin_build.HERE / name, compute / name)
    with tempfile.TemporaryDirectory() as tmp:
        host.chroot(root, ["sh", "-c", f"cd /tmp && apt-get download -q {HEADERS} {LIBPYTHON[0]}"],
                    stdout=subprocess.DEVNULL)
        for package in (HEADERS, LIBPYTHON[0]):
            (deb,) = (root / "tmp").glob(f"{package}_*.deb")
            host.run(["dpkg-deb", "-x", str(deb), tmp])
            deb.unlink()
        # the shared libpython only the native build's stand-in loads; the box's python3 is linked without it
        shutil.copy2(f"{tmp}{LIBDIR}/{LIBPYTHON[1]}", root / LIBDIR.lstrip("/") / LIBPYTHON[1])
        include = f"{tmp}/usr/include"
        own = standin_build.own_python_defines("/usr", BOX_PATHS, LIBPYTHON[1])
        link = [f"-L{tmp}{LIBDIR}", f"-l:{LIBPYTHON[1]}", "-ldl"]
        for lib, defines in (*BUILDS, (NATIVE_LIB, (*NATIVE_DEFINES, *own))):
            out = root / lib.lstrip("/")
            out.parent.mkdir(parents=True, exist_ok=True)
            source = str(compute / "neuron_runtime.c")
            cmd = standin_build.compile_command(str(out), f"{include}/{BOX_PYTHON}", COMPUTE, source, *defines,
                                                f'STANDIN_APU="{APU_SOCKET}"', cc=CROSS_CC)
            host.run([*cmd, f"-I{include}", *(link if lib == NATIVE_LIB else [])])
    target = Path(YOCTO_LIB).name
    for link in YOCTO_LINKS:
        (root / link.lstrip("/")).symlink_to(target)
    host.chroot(root, ["python3", "-c", "import importlib.util as u; assert u.find_spec('ai_edge_litert') is None"])


def start_apu(root: Path, log: Path) -> int:
    """The STAND-IN APU for the box at `root`, listening in its /run; returns its pid once it listens."""
    from device import ROOT

    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tests.device.runner.standin.apu", APU_SOCKET, str(root)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=out, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    if proc.stdout.readline().strip() != b"ready":
        raise host.Missing(f"the STAND-IN APU did not start: {log.read_text(errors='replace').strip()[-300:]}")
    return proc.pid
