"""`board-in-a-box up` after an interrupted run: a box tree left with no state file (a `down` cut short, or an
`up` killed while unpacking) is cleared before unpacking again, instead of failing on the existing folder.
Needs root like the box itself; the rootfs build is the one part replaced, by a function that stops `up` there."""
from __future__ import annotations

import os

import pytest

from tools.board_box import box, host


class Unpacking(Exception):
    """Raised where `up` would build or unpack the rootfs."""


def test_up_clears_a_leftover_tree_first(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the board in a box needs root (chroot and mounts); CI runs as root")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    try:
        host.enable_binfmt()
    except host.Missing as exc:
        pytest.skip(str(exc))
    leftover = box.paths()["root"]
    (leftover / "etc").mkdir(parents=True)
    (leftover / "etc/os-release").write_text("half removed\n")
    seen = []

    def ensure():
        seen.append(box.paths()["up"].exists())
        raise Unpacking

    monkeypatch.setattr(box.rootfs, "ensure", ensure)
    with pytest.raises(Unpacking):
        box.up()
    assert seen == [False]
