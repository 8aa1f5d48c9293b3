"""Selecting a run shows that run's audio: its own clip, or its file found again by path and sha256; a file
that is gone or changed is said to be, and no other file's waveform is shown."""
from __future__ import annotations

import shutil

from app.runs.run_audio import missing_reason
from app.runs.session import Session, run_from_dict, run_to_dict
from core.decode.options import DecodeOptions
from core.model.file_hash import sha256_files
from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait, wait_for
from tests.conftest import AUDIO


def test_picking_an_earlier_run_shows_its_audio_not_the_last_file_opened(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    en = tmp_path / "en.wav"
    shutil.copy(AUDIO / "en_asterisk_hello-world.wav", en)
    loaded = []
    window.clipLoaded.connect(loaded.append)
    window.open_audio(str(en))
    wait_for(lambda: loaded, "en.wav to load")
    first = transcribe_and_wait(window, language="en", max_tokens=3)
    assert first.audio_path == str(en.resolve()) and first.audio_sha256 == sha256_files([en])
    open_and_wait(window, "test_zh.wav")
    second = transcribe_and_wait(window, language="zh", max_tokens=3)
    assert window.run is second and window.audio.clip.name == "test_zh.wav"

    window.run_picker.setCurrentIndex(window.run_picker.findData(first.id))      # as the user picks it
    assert window.run is first and window.audio.clip is first.clip and window.clip is first.clip
    assert "en.wav" in window.audio.clip_label.text()
    assert window.audio.view.clip is first.clip           # the waveform, and the heatmap's time axis linked to it

    first.clip = None                                     # as a run read back from a session file
    window.open_run(second)
    window.open_run(first)
    wait_for(lambda: window.clip is not None and window.clip.name == "en.wav", "the run's file to load again")
    assert window.audio.view.clip is window.clip

    first.clip = None
    en.unlink()
    window.open_run(second)
    window.open_run(first)
    assert window.clip is None and window.audio.view.clip is None
    assert "is gone" in window.audio.clip_label.text() and "en.wav" in window.audio.clip_label.text()
    assert "is gone" in window.status.currentMessage()
    assert not window.controls.transcribe_button.isEnabled()


def test_the_session_file_keeps_each_runs_audio_path_and_hash_and_a_changed_file_is_named(tmp_path):
    clip = tmp_path / "a.wav"
    shutil.copy(AUDIO / "en_asterisk_hello-world.wav", clip)
    session = Session()
    run = session.new_run("a.wav", DecodeOptions(), "local", {})
    run.audio_path, run.audio_sha256 = str(clip), sha256_files([clip])
    back = run_from_dict(run_to_dict(run))
    assert (back.audio_path, back.audio_sha256) == (str(clip), sha256_files([clip]))
    assert missing_reason(back) == ""
    clip.write_bytes(clip.read_bytes() + b"\0\0")
    assert "changed" in missing_reason(back)
    back.audio_path = ""
    assert "was not kept" in missing_reason(back)
