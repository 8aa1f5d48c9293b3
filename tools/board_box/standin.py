"""The STAND-IN Neuron runtime inside the box, built once while the root filesystem is made.

MediaTek's runtime cannot exist here (no APU, no NeuroPilot libraries), so the box carries the tests' stand-in
(tests/device/runner/standin/), which computes each graph in LiteRT on the emulated CPU. It is placed where a
Genio IoT Yocto image has the real one: /usr/lib/libneuronusdk_runtime.mtk.so.8.2.16 with its `.so.8` and `.so`
links (seen on a Genio 720 image, rity v26.0; ../shared/NEUROPILOT.md). That build exports the V1 API only, as
the one public Whisper runner on an MT8189-family Yocto board uses; a V1+V2 build sits beside it in
/opt/standin/v1v2 for a URL that names it with `neuron_lib=`. The stand-in's own LiteRT is pip-installed into
/opt/standin/site, a folder on no sys.path of the box's Python: the runner cannot import it, as it could not
import MediaTek's.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from tests.device.runner.standin import build as standin_build
from tools.board_box import host

HOME = "/opt/standin"
COMPUTE = f"{HOME}/compute"            # neuron_compute.py and the C source
SITE = f"{HOME}/site"                  # the stand-in's LiteRT, imported by the stand-in alone
YOCTO_LIB = "/usr/lib/libneuronusdk_runtime.mtk.so.8.2.16"
YOCTO_LINKS = ("/usr/lib/libneuronusdk_runtime.mtk.so.8", "/usr/lib/libneuronusdk_runtime.mtk.so")
V1V2_LIB = f"{HOME}/v1v2/libneuronusdk_runtime.mtk.so.8"
LITERT = "ai-edge-litert>=2.3"         # its aarch64 wheels need numpy>=1.23.2: Debian's python3-numpy is 1.24
# (library on the box, the C defines of its build): WITH_V1 alone leaves V2 out; no WITH_* define builds both.
BUILDS = ((YOCTO_LIB, ("WITH_V1",)), (V1V2_LIB, ()))


def sources_hash() -> str:
    """A hash of the stand-in's sources: the root filesystem's tarball is rebuilt when they change."""
    h = hashlib.sha256()
    for name in standin_build.SOURCES:
        h.update(name.encode() + b"\0" + (standin_build.HERE / name).read_bytes())
    return h.hexdigest()[:12]


def install(root: Path) -> None:
    """Copy the sources in, pip-install the stand-in's LiteRT, compile both builds with the box's compiler
    against the box's Python headers, and link the Yocto names. The compiler must be there (it goes later)."""
    compute = root / COMPUTE.lstrip("/")
    compute.mkdir(parents=True)
    for name in standin_build.SOURCES:
        shutil.copy2(standin_build.HERE / name, compute / name)
    host.chroot(root, ["python3", "-m", "pip", "install", "-q", "--no-cache-dir", "--disable-pip-version-check",
                       "--no-deps", "--target", SITE, LITERT])
    include = host.chroot(root, ["python3", "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                          capture_output=True, text=True).stdout.strip()
    for lib, defines in BUILDS:
        (root / lib.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        host.chroot(root, standin_build.compile_command(lib, include, COMPUTE, f"{COMPUTE}/neuron_runtime.c",
                                                        *defines, f'STANDIN_SITE="{SITE}"'))
    target = Path(YOCTO_LIB).name
    for link in YOCTO_LINKS:
        (root / link.lstrip("/")).symlink_to(target)
    # The runner's Python must not see the stand-in's LiteRT; the stand-in, given SITE, must.
    host.chroot(root, ["python3", "-c", "import importlib.util as u; assert u.find_spec('ai_edge_litert') is None"])
    host.chroot(root, ["python3", "-c", f"import sys; sys.path.append({SITE!r}); import numpy; "
                       "from ai_edge_litert.interpreter import Interpreter"])
