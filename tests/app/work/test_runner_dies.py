"""The runner dies mid-run: an error dialog names problem and fix; the partial transcript, graphs and
exports stay."""
from __future__ import annotations

from app.work.decode_worker import TranscribeWorker
from tests.app.conftest import (
    make_window,
    open_and_wait,
    settings_file,
    transcribe_and_wait,
)
from tests.app.work.dialogs import open_error_dialog
from tests.app.work.dying import KILL_AFTER_STEP, DiesOnce, KeepStreamTransport, kill_local_runner


def test_runner_death_shows_dialog_and_keeps_partial(qtbot, tmp_path):
    worker = TranscribeWorker(decoder_factory=DiesOnce(lambda profile: KeepStreamTransport(), kill_local_runner))
    window = make_window(settings_file(tmp_path / "app.ini"), worker=worker)
    qtbot.addWidget(window)
    shown = []
    window.failureShown.connect(shown.append)
    open_and_wait(window, "test_en.wav")
    run = transcribe_and_wait(window, language="en")

    assert shown and shown[0].code == "link_lost"
    dialog = open_error_dialog(window)
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
