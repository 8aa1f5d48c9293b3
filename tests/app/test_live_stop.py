"""Stopping a live stream through the real window (offscreen, local runner), by the Live tab's Stop, the main Stop
button and Esc alike: no pass starts after the one running at the click, what was confirmed is kept, and the stream
ends under a neutral banner. While it runs, the main transcript shows the confirmed text with a grey tentative
tail, never the passes' hypotheses or their EOT marks (those stay in the token table)."""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.runs.token_names import EOT_MARK
from app.views.stop_banner import STYLES
from app.work.live_worker import LiveWorker
from core.stream.policy import StreamPolicy
from tests.app.conftest import HeldSource, make_window, open_and_wait, settings_file, wait_for

CLIP = "en_asterisk_demo-congrats.wav"   # 30 s
HOLD_S = 20.0                            # the source holds here until the stop is pressed (HeldSource)


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    w = make_window(settings_file(tmp_path_factory.mktemp("settings") / "app.ini"))
    open_and_wait(w, CLIP)
    w.activateWindow()
    yield w
    w.close()


@pytest.fixture
def tokenizer_reads(monkeypatch):
    """Every read of the tokenizer file: it holds the GIL for 80-300 ms, so a stream's start must not do it (the
    studio reads it once at start-up)."""
    from app.runs import token_names
    from core.model.tokenizer import WhisperTokenizer

    assert token_names.tokenizer() is not None
    reads = []
    real = WhisperTokenizer.from_file.__func__

    def from_file(cls, *args, **kw):
        reads.append(args)
        return real(cls, *args, **kw)

    monkeypatch.setattr(WhisperTokenizer, "from_file", classmethod(from_file))
    return reads


@pytest.fixture
def pass_starts(monkeypatch):
    """When each pass of the stream began (on the decode thread), from the policy's own entry point."""
    starts: list[float] = []
    real = StreamPolicy.run_pass

    def run_pass(self):
        starts.append(time.monotonic())
        return real(self)

    monkeypatch.setattr(StreamPolicy, "run_pass", run_pass)
    return starts


@pytest.fixture
def flag_set_at(monkeypatch):
    """When a stop reached the stream's flag (LiveWorker.stop, which the click runs on the UI thread): the moment
    no pass may start after, rather than when the click began (the decode thread runs on while Qt delivers it)."""
    times: list[float] = []
    real = LiveWorker.stop

    def stop(self):
        real(self)
        times.append(time.monotonic())

    monkeypatch.setattr(LiveWorker, "stop", stop)
    return times


@pytest.fixture
def source(monkeypatch):
    held = HeldSource(HOLD_S)
    monkeypatch.setattr("app.work.live_worker.realtime_blocks", held)
    yield held
    held.release()          # a test that failed before its stop leaves no source held


def press_live_stop(w):
    QTest.mouseClick(w.live_panel.stop_button, Qt.MouseButton.LeftButton)


def press_main_stop(w):
    QTest.mouseClick(w.controls.stop_button, Qt.MouseButton.LeftButton)


def press_escape(w):
    QTest.keyClick(w, Qt.Key.Key_Escape)


@pytest.mark.parametrize("press", [press_live_stop, press_main_stop, press_escape])
def test_stop_ends_the_stream_within_the_running_pass(window, pass_starts, flag_set_at, tokenizer_reads, source,
                                                      press):
    failed, finished = [], []
    window.failureShown.connect(failed.append)
    window.runFinished.connect(finished.append)
    QTest.mouseClick(window.live_panel.file_button, Qt.MouseButton.LeftButton)
    run = window.session.runs[-1]
    assert run.live is not None and window.run is run
    wait_for(lambda: len(window.live_panel.tally.passes) >= 2 and run.live["text"] or finished,
             "two passes and a confirmed word")
    assert not finished, "the stream ended before it could be stopped"
    assert window.controls.stop_button.isEnabled() and window.live_panel.stop_button.isEnabled()

    # mid-stream: the confirmed text and its grey tail, as the views last drew them; the hypotheses stay in the table
    wait_for(lambda: window.transcript._live_shown == (run.live["text"], run.live["tentative"]), "the transcript")
    shown = window.transcript.toPlainText()
    assert EOT_MARK not in shown and shown.startswith(run.live["text"])
    assert shown == (run.live["text"] + run.live["tentative"]).strip() or not run.live["tentative"].strip()
    if run.live["tentative"].strip():
        assert "#9e9e9e" in window.transcript.toHtml()
    assert any(row.event.is_special for row in run.rows) and window.table.model().rowCount() > 0

    press(window)
    assert len(flag_set_at) == 1, "the click did not set the stream's stop flag itself"     # not queued behind it
    source.release()
    wait_for(lambda: finished, "the stream to stop")
    window.failureShown.disconnect(failed.append)
    window.runFinished.disconnect(finished.append)
    assert not failed, failed[0].problem
    started_before = sum(t <= flag_set_at[0] for t in pass_starts)
    assert len(pass_starts) == started_before, "a pass started after the stop"
    assert len(run.live["passes"]) == len(pass_starts)        # the pass running at the click ended and was kept
    assert run.live["audio_s"] <= HOLD_S + 0.2                 # it stopped mid-file: at most a block past the hold
    assert run.stop_reason == "stopped" and run.text()
    assert run.text() == window.live_panel.committed.strip() == window.transcript.toPlainText()
    assert window.banner.reason == "stopped" and STYLES["error"][1] not in window.banner.styleSheet()
    assert window.run_picker.currentText().endswith("stopped")
    assert window.live_panel.status_line.text().startswith("stopped")
    assert window.live_panel.file_button.isEnabled() and not window.controls.stop_button.isEnabled()
    assert not tokenizer_reads          # the stream used the studio's tokenizer: its start froze nothing


def test_f11_in_the_window_presents_the_live_text_full_screen(window, qtbot):
    with qtbot.waitActive(window):
        window.activateWindow()
    QTest.keyClick(window, Qt.Key.Key_F11)
    presenter = window.live_panel.presenter
    assert window.live_panel.present_action.isChecked() and presenter.isVisible() and presenter.isFullScreen()
    assert presenter.text.toPlainText() == window.live_panel.committed       # the last stream's text
    presenter.close()
    assert not window.live_panel.present_action.isChecked()


def test_the_microphone_button_follows_the_machines_input_devices(window):
    from app.audio.recorder import input_devices

    devices, why = input_devices()
    assert window.live_panel.mic_button.isEnabled() == bool(devices)
    if not devices:                          # this machine and CI: PortAudio installed, no input device
        assert why.partition(": ")[2] in window.live_panel.mic_button.toolTip()
