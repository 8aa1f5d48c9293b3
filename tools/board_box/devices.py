"""The box's own /dev and /proc files: what it mounts so that nothing of the PC's /dev is shared or written.

The box gets a private tmpfs as its /dev holding the PC's few harmless nodes bind-mounted (null, zero, random,
urandom, full, tty), a pty folder of its own (a new devpts instance, ptmx a link into it), a fresh /dev/shm,
and a STAND-IN `/dev/apusys`: a file that exists only there, where a Genio board has its APU driver's node
(there is no NPU behind it). /proc is the PC's, with the board's cpuinfo and a meminfo of the EVK's 3.7 GiB
bind-mounted over the PC's.
"""
from __future__ import annotations

from pathlib import Path

from tools.board_box import host, identity

NODES = ("null", "zero", "random", "urandom", "full", "tty")
# ptmx as a container has it: the box's own pty instance's multiplexer
LINKS = {"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
         "stderr": "/proc/self/fd/2"}
APUSYS = "apusys"


def _mount(args: list[str], where: Path) -> None:
    host.run(["mount", *args, str(where)])


def mount_dev(root: Path) -> None:
    """A tmpfs at root/dev with the nodes bind-mounted in: nothing is created in the PC's /dev."""
    dev = root / "dev"
    _mount(["-t", "tmpfs", "-o", "size=1m,mode=755,nosuid", "boxdev"], dev)
    for name in NODES:
        (dev / name).touch()
        _mount(["--bind", f"/dev/{name}"], dev / name)
    (dev / "pts").mkdir()
    _mount(["-t", "devpts", "-o", "newinstance,ptmxmode=0666,mode=0620", "boxpts"], dev / "pts")
    (dev / "shm").mkdir(mode=0o1777)
    _mount(["-t", "tmpfs", "-o", "size=64m,mode=1777,nosuid,nodev", "boxshm"], dev / "shm")
    for name, target in LINKS.items():
        (dev / name).symlink_to(target)
    (dev / APUSYS).touch()


def mount_proc(root: Path, scratch: Path) -> None:
    """proc, then the board's cpuinfo and meminfo over the PC's (LiteRT crashes reading an x86 cpuinfo)."""
    _mount(["-t", "proc", "proc"], root / "proc")
    for name, text in (("cpuinfo", identity.cpuinfo()), ("meminfo", identity.meminfo())):
        f = scratch / name
        f.write_text(text)
        _mount(["--bind", str(f)], root / "proc" / name)
