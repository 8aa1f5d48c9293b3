"""The QA tab in the real window: a one-clip suite decoded on the local runner, scored, and opened in
the main view with its banner verdict; then a timestamped run's segments in the Segments tab."""
from __future__ import annotations

from app.work.decode_worker import TranscribeWorker
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
        window.qa.window.choice.setCurrentIndex(window.qa.window.choice.findData("20"))    # the encoder's window
        assert window.qa.start(str(tmp_path / "s.toml"))
        wait_for(lambda: finished, "the suite to finish")
        (result,) = finished[0].results
        assert result.passed, result.failures
        assert result.window_s == 20 and finished[0].meta["window"] == "20"     # the local runner has the window
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


def test_the_device_profile_s_floor_fails_a_clip_the_suite_alone_passes(qapp, tmp_path):
    """The device panel's QA floor and NPU requirement (DeviceProfile.qa_floor) hold beside the suite's: the local
    runner's CPU decode of a clip with the right text fails on both, each reason named in its row."""
    (tmp_path / "s.toml").write_text(f'[[clip]]\naudio = "{HELLO}"\nlanguage = "en"\nreference = "Hello world."\n'
                                     'max_wer = 0.5\n', encoding="utf-8")
    window = make_window(settings_file(tmp_path / "app.ini"))
    try:
        window.device.floor.setValue(100000.0)
        window.device.require_npu.setChecked(True)
        finished = []
        window.qa.suiteFinished.connect(finished.append)
        assert window.qa.start(str(tmp_path / "s.toml"))
        wait_for(lambda: finished, "the suite to finish")
        (result,) = finished[0].results
        assert not result.passed and result.ran_on == "CPU"
        assert result.failures == [f"{result.tokens_per_s:.1f} tokens/s < floor 100000",
                                   "ran on the CPU where the NPU was required"]
        assert window.run.qa_floor == {"min_tokens_per_s": 100000.0, "require_npu": True}
    finally:
        window.close()
