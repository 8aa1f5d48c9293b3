"""The studio's Live mode in the real window (offscreen) on the local runner: the loaded file streamed at 1x,
and a stand-in microphone (no sound card here); committed text shown, every pass graphed, export parses."""
import json

import numpy as np
import pytest

from core.model.audio import load_audio
from core.qa.scoring import normalize
from tests.app.conftest import make_window, open_and_wait, settings_file, wait_for
from tests.cli.test_stream_cmd import StandInMicrophone
from tests.conftest import AUDIO


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    w = make_window(settings_file(tmp_path_factory.mktemp("settings") / "app.ini"))
    open_and_wait(w, "en_arctic_slt_a0009.wav")
    yield w
    w.close()


def live(window, source: str) -> dict:
    failed = []
    window.failureShown.connect(failed.append)
    window.live_panel.startRequested.emit(source)
    assert not window.live_panel.mic_button.isEnabled() and window.live_panel.stop_button.isEnabled()
    # the panel's summary is set on the UI thread, after every event batch before it was shown
    wait_for(lambda: window.live_panel.summary is not None or failed, "the live stream to end")
    assert not failed, failed[0].problem
    return window.live_panel.summary


def test_the_loaded_file_streams_live_and_exports(window, tmp_path):
    summary = live(window, "file")
    assert summary["policy"] == "alignatt"         # the Live tab's default policy, named in the stream's summary
    panel = window.live_panel
    assert "turned sharply" in normalize(summary["text"])
    assert "turned sharply" in normalize(window.transcript.toPlainText())
    assert "turned sharply" in normalize(panel.presenter.text.toPlainText())
    assert panel.plots.passes and len(panel.plots.passes) == len(summary["passes"])
    assert panel.plots.commits and "per second of audio" in panel.figures.text()
    assert panel.status_line.text().startswith("the audio ended")
    wait_for(lambda: window.banner.reason != "streaming", "the views to settle")
    assert window.banner.reason == "end of stream" and "Live stream ended" in window.banner.text()
    assert panel.export_button.isEnabled() and panel.file_button.isEnabled()
    panel.export(tmp_path / "live.json")
    doc = json.loads((tmp_path / "live.json").read_text())
    assert doc["text"] == summary["text"] and doc["commits"] and doc["passes"]
    panel.export(tmp_path / "live.txt")
    assert "turned sharply" in normalize((tmp_path / "live.txt").read_text())


def test_the_microphone_path_through_a_stand_in_microphone(window):
    audio = np.concatenate([np.zeros(8000, np.float32), load_audio(AUDIO / "en_asterisk_hello-world.wav"),
                            np.zeros(8000, np.float32)])
    window.live_worker.stream_factory = lambda **kw: StandInMicrophone(audio, **kw)
    summary = live(window, "mic")
    assert "hello world" in normalize(summary["text"])


def test_the_chosen_policy_streams_and_is_named(window):
    """The Policy box, generated from core/stream/policies.py, sets the commit rule of the next stream."""
    panel = window.live_panel
    panel.policy_box.setCurrentIndex(panel.policy_box.findData("local-agreement"))
    try:
        summary = live(window, "file")
    finally:
        panel.policy_box.setCurrentIndex(panel.policy_box.findData("alignatt"))
    assert summary["policy"] == "local-agreement" and "turned sharply" in normalize(summary["text"])
