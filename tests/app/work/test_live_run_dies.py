"""The runner dies in the middle of a live stream: the live run keeps its error, its committed text and its
telemetry, and still exports."""
from __future__ import annotations

import json

from app.work.decode_worker import TranscribeWorker
from core.decode.events import TokenEvent
from device.link.client import BoardClient
from device.link.decoder import RunnerDecoder
from tests.app.conftest import make_window, on_gui_thread, open_and_wait, settings_file, wait_for
from tests.app.work.dying import KeepStreamTransport, kill_local_runner


class DiesAfterACommit(BoardClient):
    """The real client over the real local runner, killed mid-pass once `committed()` says the stream has
    committed something."""

    def __init__(self, transport, committed):
        super().__init__(transport)
        self.committed = committed

    def transcribe(self, mel, options=None, **kw):
        for arrival in super().transcribe(mel, options, **kw):
            yield arrival
            ev = arrival.event
            if isinstance(ev, TokenEvent) and ev.step == 1 and self.committed():
                self.committed = lambda: False
                kill_local_runner(self)


def test_a_runner_that_dies_mid_stream_leaves_an_exportable_live_run(qtbot, tmp_path, monkeypatch):
    holder = []
    worker = TranscribeWorker(decoder_factory=lambda profile, password: RunnerDecoder(DiesAfterACommit(
        KeepStreamTransport(), lambda: bool(holder and holder[0].live_runs.run and holder[0].live_runs.run.text()))))
    window = make_window(settings_file(tmp_path / "app.ini"), worker=worker)
    qtbot.addWidget(window)
    holder.append(window)
    shown, finished = [], []
    window.failureShown.connect(shown.append)
    window.runFinished.connect(finished.append)
    panel_on_gui = on_gui_thread(monkeypatch, window.live_panel, "set_running")
    # 30 s of speech at 1x: a loaded machine's few, long passes still leave one after the first commit to kill
    open_and_wait(window, "en_asterisk_demo-congrats.wav")
    window.live_panel.startRequested.emit("file")
    run = window.session.runs[-1]
    wait_for(lambda: finished, "the live stream to end")

    assert shown and shown[0].code == "link_lost"
    assert len(panel_on_gui) >= 2 and all(panel_on_gui)       # started, then ended by the failure: on the GUI thread
    assert run.error["code"] == "link_lost" and run.stop_reason == "error"
    assert run.text() and run.text() == window.live_panel.committed.strip()
    assert run.rows and run.live["passes"]
    assert window.run_picker.itemText(window.run_picker.findData(run.id)).endswith("· error")
    window.exports.export("txt", str(tmp_path / "partial.txt"))
    assert (tmp_path / "partial.txt").read_text(encoding="utf-8") == run.text() + "\n"
    window.exports.export("json", str(tmp_path / "session.json"))
    saved = json.loads((tmp_path / "session.json").read_text(encoding="utf-8"))["runs"][-1]
    assert saved["error"]["code"] == "link_lost" and saved["live"]["text"] == run.text()
