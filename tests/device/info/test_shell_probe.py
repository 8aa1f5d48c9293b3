"""The board read with its shell (device/info/shell_probe.py): whether the runner's Python is there and its version,
and the ABI (uname -m and the C library) a native runner must be built for, without asking any Python."""
from __future__ import annotations

import os
import platform
import sys

from device.info.shell_probe import MARK, facts, libc_of, shell_facts
from device.link.local import LocalTransport


def test_this_pcs_python_its_version_and_abi_are_read_by_the_shell():
    board = shell_facts(LocalTransport())
    assert (board.python, board.python_version) == (sys.executable, platform.python_version())
    glibc = os.confstr("CS_GNU_LIBC_VERSION")           # "glibc 2.36"
    assert board.libc == glibc and board.abi == f"{platform.machine()}, {glibc}"
    absent = shell_facts(LocalTransport(python="/nonexistent/python3"))
    assert absent.python is None and absent.python_version is None and absent.libc == glibc


def test_the_c_library_is_named_from_getconf_or_ldd_and_never_guessed():
    assert libc_of("glibc 2.39") == "glibc 2.39"
    assert libc_of("ldd (Ubuntu GLIBC 2.35-0ubuntu3) 2.35") == "glibc 2.35"
    assert libc_of("ldd (GNU libc) 2.39") == "glibc 2.39"
    assert libc_of("musl libc (aarch64)") == "musl"
    assert libc_of("sh: ldd: not found") is None and libc_of("") is None


def test_a_python_that_prints_no_version_has_none():
    said = f"{MARK}uname\nLinux\n6.6\naarch64\n{MARK}python\n/usr/bin/python3\nSyntaxError\n{MARK}libc\nglibc 2.39\n"
    board = facts(said + f"{MARK}end\n")
    assert (board.python, board.python_version, board.abi) == ("/usr/bin/python3", None, "aarch64, glibc 2.39")


def test_an_android_board_is_named_by_its_release_platform_and_abi_and_its_c_library_is_bionic():
    said = (f"{MARK}uname\nLinux\n6.1\naarch64\n{MARK}getprop ro.board.platform\nmt8189\n"
            f"{MARK}getprop ro.build.version.release\n14\n{MARK}getprop ro.product.cpu.abi\narm64-v8a\n"
            f"{MARK}python\n{MARK}libc\nsh: ldd: not found\n{MARK}end\n")
    board = facts(said)
    assert (board.android, board.board_platform, board.cpu_abi, board.libc) == ("14", "mt8189", "arm64-v8a", "bionic")
    assert board.os_name == "Android 14 on MT8189" and board.abi == "aarch64, bionic (arm64-v8a)"
    linux = facts(f"{MARK}uname\nLinux\n6.6\naarch64\n{MARK}os-release\nPRETTY_NAME=\"Poky 5.0\"\n{MARK}end\n")
    assert linux.os_name == "Poky 5.0" and linux.android is None and linux.abi == "aarch64"
