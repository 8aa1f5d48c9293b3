"""The device panel's chores (app/board/tasks.py): deploy ships the runner the profile's ?runner= names."""
from __future__ import annotations

import app.board.tasks
from device.link.profile import DeviceProfile


def test_deploy_ships_the_runner_the_profile_names(monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(app.board.tasks, "deploy_to", lambda transport, progress, runner: asked.append(runner) or {})
    app.board.tasks.deploy(DeviceProfile.from_url(f"local?dir={tmp_path}&runner=native"))
    app.board.tasks.deploy(DeviceProfile.from_url(f"local?dir={tmp_path}"))
    assert asked == ["native", None]
