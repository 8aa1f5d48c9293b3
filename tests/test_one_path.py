"""One path to the runner: `whisperkv transcribe`, `whisperkv qa` and the studio's decode worker open their decoder
the same way (device/link/decoder.py::open_decoder) and feed it through the same seek loop, so one minute of
speech joined from the bundled clips with pauses gets the same text from all three; `whisperkv stream` opens
its decoder through the same function."""
from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile

from cli.main import main
from core.model.audio import SAMPLE_RATE, load_audio
from tests.conftest import AUDIO

JOINED = ("test_en.wav", "en_arctic_slt_a0009.wav", "en_asterisk_demo-congrats.wav",
          "en_librivox_sense_sensibility_0870.wav", "en_asterisk_hello-world.wav")


@pytest.fixture(scope="module")
def minute(tmp_path_factory):
    """60 s: the English clips one after another, 1 s of quiet between them, quiet to the end."""
    pause = np.zeros(SAMPLE_RATE, np.float32)
    parts = [p for name in JOINED for p in (load_audio(AUDIO / name), pause)]
    audio = np.concatenate(parts)
    assert len(audio) <= 60 * SAMPLE_RATE
    audio = np.concatenate([audio, np.zeros(60 * SAMPLE_RATE - len(audio), np.float32)])
    path = tmp_path_factory.mktemp("joined") / "minute.wav"
    soundfile.write(path, audio, SAMPLE_RATE)
    return path


@pytest.fixture(scope="module")
def opened():
    """Every target device/link/decoder.py::open_decoder is called with here, the real function doing the work."""
    from device.link import decoder

    targets, real = [], decoder.open_decoder

    def spy(target, transport=None):
        targets.append(target)
        return real(target, transport)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decoder, "open_decoder", spy)
        yield targets


@pytest.fixture(scope="module")
def cli_text(minute, opened):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["transcribe", str(minute), "--language", "en", "--json"]) == 0
    assert [t.workload for t in opened] == ["one-shot"] and str(opened[0].url) == "local"
    return json.loads(out.getvalue())["text"]


def test_transcribe_and_qa_give_the_same_text_over_the_same_opener(minute, cli_text, opened, tmp_path, capsys):
    assert "ask not what your country can do for you" in cli_text and "Congratulations" in cli_text
    suite = tmp_path / "suite.toml"
    suite.write_text(f'name = "minute"\n[[clip]]\naudio = "{minute}"\nlanguage = "en"\n'
                     f'reference = "{cli_text.strip()}"\nmax_wer = 1.0\n', encoding="utf-8")
    capsys.readouterr()
    main(["qa", str(suite), "--out", str(tmp_path / "report"), "--json"])
    (clip,) = json.loads(capsys.readouterr().out)["clips"]
    assert clip["text"].strip() == cli_text.strip()
    assert opened[-1].workload == "lean" and str(opened[-1].url) == "local"


def test_the_studio_worker_gives_the_same_text(minute, cli_text, qtbot):
    from app.runs.clip import load_clip
    from app.work.decode_worker import TranscribeWorker, WorkerThread
    from core.decode.options import DecodeOptions
    from core.decode.transcript import Transcript
    from device.link.decoder import RunnerDecoder
    from device.link.profile import DeviceProfile

    worker = TranscribeWorker()
    thread = WorkerThread(worker)
    transcript, ended = Transcript(), []
    worker.events.connect(lambda run_id, batch: [transcript.add(ev) for ev, _ in batch])
    worker.finished.connect(ended.append)
    worker.failed.connect(lambda run_id, failure: ended.append(failure))
    try:
        clip = load_clip(minute)
        worker.request_transcribe(1, clip.mels, DecodeOptions(language="en"), DeviceProfile(), n_frames=clip.n_frames)
        qtbot.waitUntil(lambda: bool(ended), timeout=600_000)
        assert ended == [1]
        assert isinstance(worker.decoder, RunnerDecoder)       # opened by open_decoder (app/board/link.py)
        assert transcript.text.strip() == cli_text.strip()
        assert len(transcript.windows) >= 2                    # the host sought over the minute: 2+ requests
    finally:
        thread.stop()


def test_stream_opens_its_decoder_through_the_same_function(opened, capsys):
    before = len(opened)
    assert main(["stream", str(AUDIO / "en_asterisk_hello-world.wav"), "--language", "en", "--json"]) == 0
    assert "hello" in json.loads(capsys.readouterr().out)["text"].lower()
    assert [t.workload for t in opened[before:]] == ["serve"] and str(opened[-1].url) == "local"
