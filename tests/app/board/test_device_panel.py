"""Device panel: test connection shows the device-info; deploy to a local directory drives the progress bar."""
from __future__ import annotations

from app.board.profile import DeviceProfile
from tests.app.conftest import make_window, settings_file, wait_for


def test_test_connection_shows_device_info(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    window.device.test_button.click()
    wait_for(lambda: window.device.test_button.isEnabled(), "the connection test to finish")
    info = window.board.info
    assert info["device"] == "local"
    assert info["model_sha256"] and len(info["model_sha256"]) == 64
    text = window.device.info.toPlainText()
    assert "python" in text and info["model_sha256"] in text


def test_deploy_to_a_local_directory_shows_progress(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    target = tmp_path / "board"
    window.device.show_profile(DeviceProfile(kind="local", dir=str(target)))
    assert window.device.deploy_button.isEnabled()
    values = []
    window.device.progress.valueChanged.connect(values.append)
    window.device.deploy_button.click()
    wait_for(lambda: window.device.deploy_button.isEnabled(), "the deploy to finish")
    assert window.device.progress.value() == window.device.progress.maximum() > 1
    assert len(values) > 1
    assert (target / "device" / "runner" / "agent.py").is_file()
    assert "failed" not in window.device.info.toPlainText()
