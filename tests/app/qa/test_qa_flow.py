"""The QA tab in the real window: a one-clip suite decoded on the local runner, scored, and opened in
the main view with its banner verdict; then a timestamped run's segments in the Segments tab."""
from __future__ import annotations

from app.board.worker import TranscribeWorker
from core.model.audio import load_audio
from core.model.mel import content_frames
from device.link.client import BoardClient
from device.link.decoder import RunnerDecoder
from device.link.local import LocalTransport
from tests.app.conftest import make_window, settings_file, wait_for
from tests.conftest import AUDIO

HELLO = AUDIO / "en_asterisk_hello-world.wav"


class RecordingClient(BoardClient):
    """The real client on the local runner, noting the content frame count each request carries."""

    n_frames: list = []

    def transcribe(self, mel, options=None, **kw):
        self.n_frames.append(kw.get("n_frames"))
        return super().transcribe(mel, options, **kw)


def test_suite_row_opens_in_the_main_view(qapp, tmp_path):
    (tmp_path / "s.toml").write_text(f'[[clip]]\naudio = "{HELLO}"\n'
                                     'language = "en"\nreference = "Hello world."\nmax_wer = 0.1\n'
                                     'timestamps = true\n', encoding="utf-8")
    worker = TranscribeWorker(decoder_factory=lambda profile, password: RunnerDecoder(
        RecordingClient(LocalTransport())))
    window = make_window(settings_file(tmp_path / "app.ini"), worker=worker)
    try:
        finished = []
        window.qa.suiteFinished.connect(finished.append)
        assert window.qa.start(str(tmp_path / "s.toml"))
        wait_for(lambda: finished, "the suite to finish")
        (result,) = finished[0].results
        assert result.passed, result.failures
        assert window.qa.table.item(0, 1).text() == "PASS"
        run = window.qa.open_row(0)
        assert window.run is run and run.audio_name == "en_asterisk_hello-world.wav"
        assert "EOT at step" in window.banner.text()
        assert "hello world" in window.transcript.toPlainText().lower()
        assert window.segments.rowCount() >= 1 and "Hello" in window.segments.item(0, 2).text()
        assert window.qa.write_report(tmp_path / "report").is_file()
        assert RecordingClient.n_frames == [content_frames(load_audio(HELLO))]   # timestamps never seek into padding
    finally:
        window.close()
