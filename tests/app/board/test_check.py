"""Check board's checkup (app/board/check.py): the profile's bundle is the doctor's --model when the profile's runner
is this PC's and its model names an exported bundle; a board's model is its own, checked against deploy's record."""
from __future__ import annotations

import json

from app.board.check import board_checkup
from device.link.profile import DeviceProfile


def test_the_profiles_bundle_is_checked_when_it_names_one_on_this_pc(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "model.json").write_text(json.dumps({"dla": {"soc": "mt8371"}}))
    assert board_checkup(DeviceProfile.from_url(f"local?backend=dla&model={bundle}")).bundle == bundle.resolve()
    assert board_checkup(DeviceProfile.from_url("local")).bundle is None
    assert board_checkup(DeviceProfile.from_url(f"local?model={tmp_path}")).bundle is None     # weights, no bundle
    # on a board the model setting is a folder there: the board's record and model.json are read instead
    assert board_checkup(DeviceProfile.from_url(f"ssh://root@board?model={bundle}")).bundle is None


def test_the_profiler_runs_only_when_the_profile_asks_for_it():
    assert board_checkup(DeviceProfile.from_url("local?backend=dla")).npu_profile is False
    assert board_checkup(DeviceProfile.from_url("local?backend=dla&npu_profile=on")).npu_profile is True
