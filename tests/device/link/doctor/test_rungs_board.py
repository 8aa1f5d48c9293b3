"""The board rungs' helpers (device/link/doctor/rungs_board.py) on their own."""
from __future__ import annotations

import json

from device.link.doctor.rungs_board import deploy_mode, deployed_mode
from device.link.local import LocalTransport


def test_the_deploy_mode_is_read_from_the_boards_manifest(tmp_path):
    t = LocalTransport(dir=str(tmp_path))
    assert deployed_mode(t, str(tmp_path)) is None          # nothing deployed
    (tmp_path / "manifest.json").write_text(json.dumps({"backend": "tflite", "files": {}}))
    assert deployed_mode(t, str(tmp_path)) == "tflite"
    (tmp_path / "manifest.json").write_text("not json")
    assert deployed_mode(t, str(tmp_path)) is None


def test_each_backend_names_the_deploy_mode_that_ships_what_it_reads():
    assert deploy_mode("dla") == "dla" and deploy_mode("tflite") == "tflite" and deploy_mode("auto") == "auto"
