"""A STAND-IN Android board for the tests (issue 54): no Android device exists here.

A folder laid out as an Android root, reached with a STAND-IN `adb` (adb_standin.py) whose `shell` runs the line
with chroot in that folder as adb's shell user (uid 2000), the kernel's binfmt qemu-aarch64 running each arm64
program as `qemu-aarch64-static -L ROOT` would:
- /system/bin/linker64 and /system/lib64/lib{c,dl,m,log,z}.so: arm64 Android's own (../shared/android-bionic);
- /system/bin/sh and its applets: Debian's arm64 busybox-static, a STAND-IN for Android's toybox and mksh;
- /system/bin/getprop (STAND-IN: a script reading /system/build.prop, an MT8189 board on Android 14) and
  /system/bin/logcat (STAND-IN: `-d` prints the board's log, /dev/standin-log, where the runtime below writes);
- /vendor/lib64/mt8189/libneuron_runtime.8.so: the STAND-IN Neuron runtime (tests/device/runner/standin/) built for
  bionic in its WIRE mode: it hands every graph to the STAND-IN APU (apu_wire.py), a process on the PC the board
  starts, over the unix socket /dev/socket/standin-apu, as the real library hands them to the APU beside the CPU;
- /data/local/tmp, where adb's shell user may write and run programs; no Python anywhere.
/proc and a private /dev (tools/board_box/devices.py) are mounted while the board is up.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

from device import ROOT as REPO
from tests.device.android import adb_standin, busybox

SHARED = REPO.parent / "shared" / "android-bionic"
SERIAL = "ANDROID01"
SHELL_UID = 2000                     # adb's shell user, AID_SHELL
VENDOR_LIB = "/vendor/lib64/mt8189/libneuron_runtime.8.so"
APU_SOCKET = "/dev/socket/standin-apu"
LOG = "/dev/standin-log"
TMP = "/data/local/tmp"
PROPS = {"ro.board.platform": "mt8189", "ro.product.cpu.abi": "arm64-v8a", "ro.build.version.release": "14",
         "ro.build.version.sdk": "34", "ro.product.model": "MT8371 Android board (STAND-IN)",
         "ro.product.manufacturer": "MediaTek", "ro.product.board": "mt8189", "ro.hardware": "mt8189",
         "ro.soc.manufacturer": "Mediatek", "ro.soc.model": "MT8371"}
GETPROP = """#!/system/bin/sh
# STAND-IN for Android's getprop (tests/device/android/board.py): /system/build.prop's properties.
if [ $# -eq 0 ]; then
    grep '=' /system/build.prop | sort | while IFS='=' read -r k v; do echo "[$k]: [$v]"; done
    exit 0
fi
v=$(grep "^$1=" /system/build.prop | head -n 1 | cut -d= -f2-)
echo "${v:-$2}"
"""
LOGCAT = """#!/system/bin/sh
# STAND-IN for Android's logcat (tests/device/android/board.py): the board's log, in logcat's threadtime format.
# -d prints it, -c clears it, -s TAG... keeps those tags' lines.
dump=0; only=""; tags=""
for a in "$@"; do
    case "$a" in -d) dump=1;; -c) : > LOG; exit 0;; -s) only=1;; -*) ;; *) tags="$tags|${a%%:*}";; esac
done
[ "$dump" = 1 ] || { echo "logcat (STAND-IN): only -d and -c" >&2; exit 1; }
echo "--------- beginning of main"
if [ -n "$only" ] && [ -n "$tags" ]; then
    grep -E " [VDIWEF] (${tags#|}) *:" LOG
else
    cat LOG
fi
exit 0
""".replace("LOG", LOG)
BOOT_LOG = ("I init    : Service 'adbd' (pid 412) started (STAND-IN board)",
            "I ActivityManager: System now ready (STAND-IN board)")


def missing() -> str | None:
    """Why this PC cannot bring the board up (the tests skip, saying it), or None."""
    if not (SHARED / "system" / "bin" / "linker64").is_file():
        return f"{SHARED} (arm64 Android's linker and libraries) is absent"
    if os.geteuid() != 0:
        return "the STAND-IN Android board needs root (chroot, mounts)"
    from tools.board_box import host

    try:
        host.enable_binfmt()          # registered as the box registers it, when binfmt-support has not yet
    except (host.Missing, OSError) as exc:
        return f"qemu-aarch64 is not registered with binfmt_misc: {exc}"
    if not (host.BINFMT / "qemu-aarch64").read_text().startswith("enabled"):
        return "binfmt_misc's qemu-aarch64 handler is disabled (update-binfmts --enable qemu-aarch64)"
    if shutil.which("aarch64-linux-gnu-gcc") is None:
        return "no arm64 cross compiler for the bionic builds (Debian: apt-get install gcc-aarch64-linux-gnu)"
    return None


@cache
def runtime_library() -> Path:
    """The STAND-IN runtime's bionic WIRE build (V1 and V2, rows padded as the Python runner's stand-in builds),
    once per test process."""
    from tests.device.runner.standin.build import build_wire

    out = Path(os.environ.get("WHISPERKV_CACHE") or "/tmp") / f"android-standin-{os.getpid()}"
    return build_wire(out, "PADDED", apu=APU_SOCKET, log=LOG, name=Path(VENDOR_LIB).name)


def _write(path: Path, text: str | bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    path.chmod(mode)


def lay_out(root: Path) -> str:
    """The Android root at `root`; returns the arch its shell runs as (aarch64, or x86_64 with the fallback)."""
    shutil.copytree(SHARED / "system", root / "system", symlinks=True)
    bb, arch = busybox.path()
    shutil.copy2(bb, root / "system/bin/busybox")
    for applet in busybox.APPLETS:
        (root / "system/bin" / applet).symlink_to("busybox")
    _write(root / "system/bin/getprop", GETPROP, 0o755)
    _write(root / "system/bin/logcat", LOGCAT, 0o755)
    _write(root / "system/build.prop", "".join(f"{k}={v}\n" for k, v in PROPS.items()))
    lib = root / VENDOR_LIB.lstrip("/")
    lib.parent.mkdir(parents=True)
    shutil.copy2(runtime_library(), lib)
    for d in ("proc", "dev", "sys", "sdcard", "vendor/bin"):
        (root / d).mkdir(parents=True, exist_ok=True)
    tmp = root / TMP.lstrip("/")
    tmp.mkdir(parents=True)
    for d in (root / "data", root / "data/local"):
        d.chmod(0o771)
    os.chown(tmp, SHELL_UID, SHELL_UID)
    tmp.chmod(0o771)
    return arch


def _mounts_under(root: Path) -> list[str]:
    prefix = str(root.resolve())
    points = (line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines())
    return [p for p in points if p == prefix or p.startswith(prefix + "/")]


def _log_line(text: str) -> str:
    return time.strftime("%m-%d %H:%M:%S.000", time.gmtime()) + f"   412   412 {text}\n"


class Board:
    """The STAND-IN Android board at `folder`/root, up from start() to stop()."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.root = self.folder / "root"
        self.bin = self.folder / "bin"
        self.adb_log = self.folder / "adb-calls.jsonl"
        self.apu: subprocess.Popen | None = None
        self.arch = ""

    def start(self) -> Board:
        from tools.board_box import devices

        self.arch = lay_out(self.root)
        devices.mount_proc(self.root, self.folder)
        devices.mount_dev(self.root)
        (self.root / "dev/socket").mkdir()
        _write(self.root / LOG.lstrip("/"), "".join(map(_log_line, BOOT_LOG)), 0o666)
        self.apu = self._start_apu()
        adb_standin.install(self.bin, self.root, self.adb_log, SERIAL, SHELL_UID)
        return self

    def _start_apu(self) -> subprocess.Popen:
        log = self.folder / "apu.log"
        with open(log, "ab") as err:
            proc = subprocess.Popen([sys.executable, "-m", "tests.device.runner.standin.apu_wire", APU_SOCKET,
                                     str(self.root)], cwd=REPO, stdout=subprocess.PIPE, stderr=err,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        if proc.stdout.readline().strip() != b"ready":
            proc.kill()
            raise RuntimeError(f"the STAND-IN APU did not start: {log.read_text(errors='replace')[-300:]}")
        return proc

    def env(self) -> dict:
        """This process's environment with the STAND-IN adb first on PATH."""
        return dict(os.environ, PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}")

    def shell(self, line: str, **kw) -> subprocess.CompletedProcess:
        """`adb -s SERIAL shell -T LINE` through the STAND-IN adb."""
        return subprocess.run([str(self.bin / "adb"), "-s", SERIAL, "shell", "-T", line], capture_output=True,
                              env=self.env(), **kw)

    def stop(self) -> None:
        if self.apu is not None:
            self.apu.kill()
            self.apu.wait()
            self.apu = None
        for pid in _pids_in(self.root):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        for point in sorted(_mounts_under(self.root), key=len, reverse=True):
            if subprocess.run(["umount", point], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", point], check=False)


def _pids_in(root: Path) -> list[int]:
    """The processes whose root directory is the board's (runners a test left running)."""
    real, pids = str(root.resolve()), []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and os.readlink(d / "root") == real:
                pids.append(int(d.name))
        except OSError:
            continue
    return pids
