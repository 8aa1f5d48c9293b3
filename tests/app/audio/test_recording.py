"""Recording: through a stand-in input stream (this machine has no audio device), and the clear
'recording is off' state when PortAudio finds no device."""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys

from app.audio.recorder import NO_DEVICE_FIX, NO_PORTAUDIO_FIX, InputDevice, Recorder, input_devices
from core.model.audio import load_audio
from tests.app.audio.stand_in_stream import StandInInputStream
from tests.app.conftest import make_window, settings_file, wait_for
from tests.conftest import AUDIO


def test_record_through_stand_in_stream_becomes_the_clip(qtbot, tmp_path):
    speech = load_audio(AUDIO / "test_zh.wav")
    streams = []

    def factory(**kw):
        streams.append(StandInInputStream(speech, **kw))
        return streams[-1]

    window = make_window(settings_file(tmp_path / "app.ini"), recorder=Recorder(stream_factory=factory))
    qtbot.addWidget(window)
    panel = window.audio
    panel.refresh_devices(([InputDevice(3, "stand-in microphone", 1)], ""))
    assert panel.record_button.isEnabled()

    levels = []
    panel.level.valueChanged.connect(levels.append)
    loaded = []
    window.clipLoaded.connect(loaded.append)
    panel.record_button.click()
    assert streams and streams[0].device == 3
    wait_for(lambda: streams[0].fed_everything() and levels, "the stand-in to feed its blocks")
    panel.record_button.click()
    wait_for(lambda: loaded, "the recording to become the clip")

    clip = loaded[0]
    assert streams[0].closed
    assert max(levels) > 0
    assert len(clip.samples) == len(speech)
    assert clip.mels.shape == (1, 80, 3000)
    assert window.controls.transcribe_button.isEnabled()
    assert panel.view.mel_shape() == (80, 3000)


def test_no_input_device_disables_recording_with_a_message(qtbot):
    from app.audio.panel import AudioPanel

    panel = AudioPanel()
    qtbot.addWidget(panel)
    panel.refresh_devices(([], "Recording is off: no audio input device was found — plug in a microphone."))
    assert not panel.record_button.isEnabled()
    assert "no audio input device" in panel.record_note.text()
    assert panel.open_button.isEnabled()


def test_this_machine_reports_why_recording_is_off():
    """The devices PortAudio lists for input, or (as on this machine and CI's) none and the sentence why."""
    import sounddevice as sd

    inputs = [d["name"] for d in sd.query_devices() if d["max_input_channels"] > 0]
    devices, why = input_devices()
    assert [d.name for d in devices] == inputs
    if inputs:
        assert why == "" and all(d.channels > 0 for d in devices)
    else:
        assert why == f"Recording is off: no audio input device was found — {NO_DEVICE_FIX}."


class NoPortAudio(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A stand-in for a machine without libportaudio2: importing sounddevice raises the OSError it raises there."""

    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "sounddevice" else None

    def exec_module(self, module):
        raise OSError("PortAudio library not found")


def test_without_portaudio_recording_is_off_and_says_what_to_install(monkeypatch):
    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoPortAudio(), *sys.meta_path])
    devices, why = input_devices()
    assert devices == []
    assert why == f"Recording is off: the PortAudio library is missing — {NO_PORTAUDIO_FIX}."
    assert "apt-get install libportaudio2" in why


def test_opening_the_stream_fails_becomes_a_dialog(qtbot, tmp_path):
    def broken(**kw):
        raise OSError("Error querying device -1")

    window = make_window(settings_file(tmp_path / "app.ini"), recorder=Recorder(stream_factory=broken))
    qtbot.addWidget(window)
    shown = []
    window.failureShown.connect(shown.append)
    window.audio.refresh_devices(([InputDevice(0, "stand-in microphone", 1)], ""))
    window.audio.record_button.click()
    assert shown and "cannot open" in shown[0].problem and "Error querying device" in shown[0].problem
    assert shown[0].fix
    assert not window.audio.record_button.isChecked()

