"""The runner dies mid-run: an error dialog names problem and fix; the partial transcript, graphs and
exports stay."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from app.board.worker import TranscribeWorker
from app.views.error_dialog import OBJECT_NAME
from core.decode.events import TokenEvent
from device.link.client import BoardClient
from device.link.local import LocalTransport
from tests.app.conftest import (
    make_window,
    open_and_wait,
    settings_file,
    transcribe_and_wait,
)

KILL_AFTER_STEP = 2


class KeepStreamTransport(LocalTransport):
    """The real local transport, keeping hold of the runner process so the test can kill it."""

    def start_runner(self, args):
        self.stream = super().start_runner(args)
        return self.stream


class RunnerKilledMidStream(BoardClient):
    """The real client; right after handing over the step-2 token it kills the runner (SIGKILL)."""

    def transcribe(self, mel, options=None, **kw):
        for arrival in super().transcribe(mel, options, **kw):
            yield arrival
            if isinstance(arrival.event, TokenEvent) and arrival.event.step == KILL_AFTER_STEP:
                self.transport.stream.proc.kill()


def test_runner_death_shows_dialog_and_keeps_partial(qtbot, tmp_path):
    worker = TranscribeWorker(client_factory=lambda profile, password: RunnerKilledMidStream(KeepStreamTransport()))
    window = make_window(settings_file(tmp_path / "app.ini"), worker=worker)
    qtbot.addWidget(window)
    shown = []
    window.failureShown.connect(shown.append)
    open_and_wait(window, "test_en.wav")
    run = transcribe_and_wait(window, language="en")

    assert shown and shown[0].code == "link_lost"
    dialog = window.findChild(QMessageBox, OBJECT_NAME)
    assert dialog is not None and dialog.isVisible()
    assert "Problem:" in dialog.text() and "Fix:" in dialog.informativeText()
    assert "Traceback" not in dialog.text() + dialog.informativeText()
    dialog.close()

    assert run.error is not None and run.stop_reason == "error"
    assert len(run.rows) >= KILL_AFTER_STEP + 1
    assert window.transcript.plain_text().strip().startswith("And so")
    assert window.banner.reason == "error"
    assert window.plots.cache.point_count() == len(run.rows) == window.table.row_count()
    window.exports.export("txt", str(tmp_path / "partial.txt"))
    assert (tmp_path / "partial.txt").read_text(encoding="utf-8").startswith("And so")
    window.exports.export("json", str(tmp_path / "partial.json"))
    assert '"error"' in (tmp_path / "partial.json").read_text(encoding="utf-8")
