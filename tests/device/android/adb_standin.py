"""The STAND-IN `adb` of the STAND-IN Android board (board.py): the script the tests put first on PATH."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

# What adb's shell has on an Android 14 device (HOME is /, which the shell user cannot write)
SHELL_ENV = {"PATH": "/product/bin:/apex/com.android.runtime/bin:/system_ext/bin:/system/bin:/system/xbin:"
                     "/odm/bin:/vendor/bin:/vendor/xbin", "HOME": "/", "TMPDIR": "/data/local/tmp",
             "ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "USER": "shell", "LOGNAME": "shell",
             "SHELL": "/system/bin/sh", "HOSTNAME": "localhost"}
WRITABLE = ("/data/local/tmp", "/sdcard")      # where adb push may write as the shell user

SCRIPT = '''\
#!{python}
"""STAND-IN for the Android `adb` client, written by the tests (tests/device/android/board.py): no Android device
exists here. Its one device is a folder laid out as an Android root: `shell [-T] LINE` runs
`chroot ROOT /system/bin/sh -c LINE` as adb's shell user (the kernel's binfmt qemu-aarch64 runs the arm64 programs),
stdin and stdout passed through as they are and the exit status passed back; `push` and `pull` copy into and out of
the folder. Each call's argv is appended to a log, one JSON list a line."""
import json, os, shutil, sys, time

C = {config!r}
args = sys.argv[1:]
with open(C["log"], "a") as log:
    log.write(json.dumps(args) + "\\n")
serial = os.environ.get("ANDROID_SERIAL")
if args[:1] == ["-s"]:
    serial, args = args[1], args[2:]


def on_board(path):
    return C["root"] + "/" + os.path.normpath("/" + path).lstrip("/")


def owned(path):
    os.lchown(path, C["uid"], C["uid"])
    for top, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(top, name), C["uid"], C["uid"])


if args == ["devices", "-l"]:
    print("List of devices attached")
    print("%-22s device usb:1-1 product:mt8189 model:MT8371_Android device:mt8189 transport_id:1" % C["serial"])
    print()
elif args[:1] in (["kill-server"], ["start-server"], ["wait-for-device"]):
    pass
elif serial not in (None, C["serial"]):
    sys.exit("adb: device '%s' not found" % serial)
elif args == ["get-state"]:
    print("device")
elif args[:1] == ["shell"]:
    rest = args[1:]
    while rest[:1] in (["-T"], ["-t"], ["-n"], ["-x"]):
        rest = rest[1:]
    if not rest:
        sys.exit("adb (STAND-IN): an interactive shell is not served")
    os.execve(C["chroot"], ["chroot", "--userspec=%d:%d" % (C["uid"], C["uid"]), C["root"], "/system/bin/sh", "-c",
                            " ".join(rest)], C["env"])
elif args[:1] == ["push"] and len(args) == 3:
    src, dst = args[1], "/" + os.path.normpath(args[2]).lstrip("/")
    if not any(dst == w or dst.startswith(w + "/") for w in C["writable"]):
        sys.exit("adb: error: failed to copy '%s' to '%s': remote couldn't create file: Permission denied"
                 % (src, args[2]))
    target = on_board(dst)
    if args[2].endswith("/") or os.path.isdir(target):
        target = os.path.join(target, os.path.basename(src.rstrip("/")))
    t, made = time.monotonic(), target
    while not os.path.exists(os.path.dirname(made)):
        made = os.path.dirname(made)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.isdir(src):
        shutil.copytree(src, target, dirs_exist_ok=True)
    else:
        shutil.copyfile(src, target)
        shutil.copymode(src, target)
    owned(made)
    size = os.path.getsize(target) if os.path.isfile(target) else 0
    print("%s: 1 file pushed, 0 skipped. (%d bytes in %.3fs)" % (src, size, time.monotonic() - t))
elif args[:1] == ["pull"] and len(args) in (2, 3):
    source = on_board(args[1])
    if not os.path.exists(source):
        sys.exit("adb: error: failed to stat remote object '%s': No such file or directory" % args[1])
    dst = args[2] if len(args) == 3 else "."
    if os.path.isdir(dst):
        dst = os.path.join(dst, os.path.basename(source))
    (shutil.copytree if os.path.isdir(source) else shutil.copyfile)(source, dst)
    print("%s: 1 file pulled, 0 skipped." % args[1])
else:
    sys.exit("adb (STAND-IN): unsupported call %r" % (args,))
'''


def install(bindir: Path, root: Path, log: Path, serial: str, uid: int) -> Path:
    """The STAND-IN adb written to `bindir`/adb for the board at `root`; its calls logged to `log`."""
    bindir.mkdir(parents=True, exist_ok=True)
    log.touch()
    config = {"root": str(root.resolve()), "log": str(log), "serial": serial, "uid": uid, "env": SHELL_ENV,
              "writable": WRITABLE, "chroot": shutil.which("chroot") or "/usr/sbin/chroot"}
    exe = bindir / "adb"
    exe.write_text(SCRIPT.format(python=sys.executable, config=config))
    exe.chmod(0o755)
    return exe
