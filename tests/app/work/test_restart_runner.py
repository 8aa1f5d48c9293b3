"""A runner that died mid-run is offered back: the error dialog's Restart runner starts a new runner off
the UI thread, the partial run stays on display, and the next run decodes on the restarted runner."""
from __future__ import annotations

from app.work.decode_worker import TranscribeWorker
from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait, wait_for
from tests.app.work.dialogs import restart_button
from tests.app.work.dying import DiesOnce, KeepStreamTransport, kill_local_runner


def test_restart_runner_after_the_runner_died(qtbot, tmp_path):
    factory = DiesOnce(lambda profile: KeepStreamTransport(), kill_local_runner)
    window = make_window(settings_file(tmp_path / "app.ini"), worker=TranscribeWorker(decoder_factory=factory))
    qtbot.addWidget(window)
    connected = []
    window.board.connected.connect(connected.append)
    open_and_wait(window, "test_en.wav")
    failed = transcribe_and_wait(window, language="en")
    assert failed.stop_reason == "error" and "runner lost" in window.status.device.text()
    partial = window.transcript.plain_text()
    assert partial.strip().startswith("And so")

    connected.clear()
    button = restart_button(window)
    assert button is not None, "the dialog offers no Restart runner"
    button.click()
    # The worker thread does the restart; had it run here, `connected` would already have fired.
    assert not connected and "restarting the runner" in window.status.device.text()
    wait_for(lambda: connected, "the restarted runner's hello")
    assert len(factory.clients) == 2 and factory.clients[1].transport.stream.proc.poll() is None
    assert "(connected)" in window.status.device.text()
    assert window.run is failed and window.transcript.plain_text() == partial     # the partial run stays

    again = transcribe_and_wait(window, language="en")
    assert again.error is None and again.stop_reason == "eot"
    assert len(factory.clients) == 2                     # decoded on the restarted runner
    assert again.text().startswith(partial.strip()[:20])
