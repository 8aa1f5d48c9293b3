"""The STAND-IN Android board (board.py), one per test module: its tests share it, in one xdist group."""
from __future__ import annotations

import pytest

from tests.device.android import board as android


@pytest.fixture(scope="module")
def android_board(tmp_path_factory):
    """The STAND-IN Android board, up for the module; skipped, saying why, where this PC cannot bring it up."""
    why = android.missing()
    if why:
        pytest.skip(why)
    up = android.Board(tmp_path_factory.mktemp("android-board"))
    try:
        yield up.start()
    finally:
        up.stop()
