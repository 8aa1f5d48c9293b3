"""Settings persist with QSettings; passwords never land in the settings file."""
from __future__ import annotations

from core.decode.options import DecodeOptions
from device.link.profile import DeviceProfile
from tests.app.conftest import make_window, settings_file


def test_options_profiles_and_recent_files_persist(qtbot, tmp_path):
    ini = tmp_path / "app.ini"
    first = make_window(settings_file(ini))
    qtbot.addWidget(first)
    first.controls.set_options(DecodeOptions(language="zh", task="translate", cache=False, max_tokens=100))
    first.device.show_profile(DeviceProfile.from_url("ssh://qa@board.local:2222?python=/usr/bin/python3"))
    first.device.password.setText("hunter2-secret")
    first.device.save_as("MT8371 board")
    first.settings.add_recent("/data/clip.wav")
    first.close()

    assert "hunter2-secret" not in ini.read_text(encoding="utf-8")
    second = make_window(settings_file(ini))
    qtbot.addWidget(second)
    assert second.controls.options() == DecodeOptions(language="zh", task="translate", cache=False, max_tokens=100)
    assert second.device.current_name() == "MT8371 board"
    profile = second.device.profile()
    assert (profile.kind, profile.target.url.host, profile.target.url.user, profile.target.url.port) == (
        "ssh", "board.local", "qa", 2222)
    assert profile.url() == "ssh://qa@board.local:2222?python=/usr/bin/python3"
    assert second.settings.recent[0] == "/data/clip.wav"
    assert second.audio.recent_menu.actions()[0].text() == "/data/clip.wav"
    second.close()


def test_suppress_eot_is_not_carried_into_the_next_session(qtbot, tmp_path):
    """A diagnostics trap: decoding past EOT is asked for each time, never restored at start-up."""
    ini = tmp_path / "app.ini"
    first = make_window(settings_file(ini))
    qtbot.addWidget(first)
    first.controls.set_options(DecodeOptions(suppress_eot=True, max_tokens=448, language="en"))
    first.close()
    second = make_window(settings_file(ini))
    qtbot.addWidget(second)
    options = second.controls.options()
    assert not options.suppress_eot and not second.controls.suppress_eot.isChecked()
    assert options.max_tokens == 448 and options.language == "en"     # the rest is restored
    second.close()


def test_the_attention_box_is_restored_as_left_with_the_cache_off(qtbot, tmp_path):
    """Options with the cache off carry no attention (DecodeOptions refuses it), but the box stays ticked, so
    attention comes back with the cache in the next session too."""
    ini = tmp_path / "app.ini"
    first = make_window(settings_file(ini))
    qtbot.addWidget(first)
    first.controls.set_options(DecodeOptions(language="en", cache=False), attention=True)
    assert not first.controls.options().attention
    first.close()
    second = make_window(settings_file(ini))
    qtbot.addWidget(second)
    assert second.controls.options() == DecodeOptions(language="en", cache=False)
    assert second.controls.attention.isChecked()
    second.controls.cache.setChecked(True)
    assert second.controls.options().attention
    second.close()
