"""Cut the box off from every package index, and back: a lab board with no route to PyPI.

Offline, the box's resolv.conf names a nameserver on the box's own loopback address where nothing listens, so no
host name resolves, and /etc/pip.conf points pip's index at a closed port of that address with no retries, so a
`pip install NAME` on the box fails at once instead of waiting. The box shares the PC's network namespace: an
address given by number is still reached, but no package index is named that way.
"""
from __future__ import annotations

from pathlib import Path

DEAD_PORT = 9          # the discard port: nothing listens on the box's own address
PIP_CONF = "[global]\nindex-url = http://{addr}:{port}/simple/\nretries = 0\ntimeout = 3\n"
MARK = "# board-in-a-box: offline\n"


def cut_off(root: Path, addr: str) -> None:
    etc = root / "etc"
    resolv = etc / "resolv.conf"
    if resolv.is_symlink():
        resolv.unlink()
    if resolv.is_file() and not is_offline(root):
        resolv.rename(etc / "resolv.conf.online")
    resolv.write_text(f"{MARK}nameserver {addr}\noptions timeout:1 attempts:1\n")
    (etc / "pip.conf").write_text(MARK + PIP_CONF.format(addr=addr, port=DEAD_PORT))


def reconnect(root: Path) -> None:
    etc = root / "etc"
    if not is_offline(root):
        return
    online = etc / "resolv.conf.online"
    if online.is_file():
        online.rename(etc / "resolv.conf")
    else:
        (etc / "resolv.conf").unlink()
    (etc / "pip.conf").unlink(missing_ok=True)


def is_offline(root: Path) -> bool:
    resolv = root / "etc/resolv.conf"
    return resolv.is_file() and resolv.read_text().startswith(MARK)
