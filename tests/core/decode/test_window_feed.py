"""Long audio one window per request gives the events of decoding the whole mel at once."""
from dataclasses import asdict

import numpy as np
import pytest

from core.decode.events import DoneEvent, EncodedEvent
from core.decode.options import DecodeOptions
from core.decode.window_feed import decode_source
from core.model.audio import load_audio
from core.model.mel import content_frames, mel_windows
from core.model.mel_file import MelSource
from tests.conftest import AUDIO

TIMING = ("ms", "ms_total", "cache_hit")      # clocks, and whether the shared encoder cache was warm


def comparable(events) -> list[dict]:
    return [{k: v for k, v in asdict(ev).items() if k not in TIMING} for ev in events]


@pytest.fixture(scope="module")
def onnx_model():
    from device.runner.load import load_model_source

    return load_model_source(None, "onnx")


def first_windows(events, n: int) -> list:
    """The events of the first n windows (the rest is never decoded: the generators are lazy)."""
    out = []
    for ev in events:
        out.append(ev)
        if isinstance(ev, DoneEvent) and sum(isinstance(e, DoneEvent) for e in out) == n:
            break
    return out


@pytest.fixture(scope="module")
def long_audio() -> np.ndarray:
    """62 s of speech: three 30 s windows, the last one short."""
    names = ["en_asterisk_demo-congrats.wav", "test_en.wav", "en_librivox_sense_sensibility_0870.wav",
             "en_arctic_slt_a0009.wav", "test_en.wav"]
    return np.concatenate([load_audio(AUDIO / n) for n in names])


@pytest.mark.parametrize("timestamps", [False, True])
def test_window_by_window_equals_the_whole_mel(onnx_model, encoder_cache, long_audio, timestamps):
    """The first three windows, four with timestamps (which start at 0, 7, 14 and 19.64 s). Without timestamps
    the decoder samples timestamp tokens anyway, only to seek (the audio is longer than a window)."""
    model, n = onnx_model, 4 if timestamps else 3
    options = DecodeOptions(max_tokens=24, timestamps=timestamps)
    whole = first_windows(model.transcribe(mel_windows(long_audio), options, encoder_cache=encoder_cache,
                                           n_frames=content_frames(long_audio)), n)
    requests = []

    def decode_one(mel, opts, n_frames):
        requests.append((mel.shape, opts.language, n_frames))
        return model.transcribe(mel, opts, encoder_cache=encoder_cache, n_frames=n_frames)

    by_window = first_windows(decode_source(MelSource.of_audio(long_audio), options, decode_one), n)
    assert comparable(by_window) == comparable(whole)
    dones = [e for e in whole if isinstance(e, DoneEvent)]
    assert len(dones) == len(requests) == n and all(shape == (1, 80, 3000) for shape, _, _ in requests)
    assert requests[0][1] is None and {lang for _, lang, _ in requests[1:]} == {"en"}   # detected once
    if timestamps:      # Whisper's seek: windows start at the last timestamp, not on the 30 s grid
        assert any(d.offset_s % 30 for d in dones) and any(d.segments for d in dones)


def test_a_cancelled_window_ends_the_run(long_audio):
    calls = []

    def decode_one(mel, opts, n_frames):
        calls.append(n_frames)
        yield EncodedEvent(window=0, ms=1.0, language="en")
        yield DoneEvent(window=0, reason="cancelled", tokens=[], text="", ms_total=1.0)

    events = list(decode_source(MelSource.of_audio(long_audio), DecodeOptions(), decode_one))
    assert len(calls) == 1 and events[-1].reason == "cancelled"


def test_words_and_levels_window_by_window(onnx_model, encoder_cache, long_audio):
    """Per-window requests give the words of the whole-mel decode, placed at each window's offset, and
    leave each window's loudness track for the EOT focus."""
    options = DecodeOptions(max_tokens=24, word_timestamps=True, language="en")
    whole = first_windows(onnx_model.transcribe(mel_windows(long_audio), options, encoder_cache=encoder_cache,
                                                n_frames=content_frames(long_audio)), 2)
    levels = {}
    by_window = first_windows(decode_source(
        MelSource.of_audio(long_audio), options,
        lambda mel, opts, n: onnx_model.transcribe(mel, opts, encoder_cache=encoder_cache, n_frames=n),
        levels=levels), 2)
    words = [[d.words for d in evs if isinstance(d, DoneEvent)] for evs in (whole, by_window)]
    assert words[0] == words[1] and all(words[0])
    # Long audio seeks by timestamps: the second window starts where the first one's last segment ended.
    start = [d.offset_s for d in by_window if isinstance(d, DoneEvent)][1]
    second = words[1][1]
    assert 0 < start <= second[0]["start"] and second[-1]["end"] <= start + 30.0
    assert sorted(levels) == [0, 1] and len(levels[0]) == 3000
