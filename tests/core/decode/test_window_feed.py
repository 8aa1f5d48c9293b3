"""The host's one seek loop (core/decode/window_feed.py): long audio one window per request, from a file's
MelSource or from held windows alike; the first window's language kept; Whisper's seek; cancels and drafts."""
from dataclasses import asdict

import numpy as np
import pytest

from core.decode.events import DoneEvent, EncodedEvent
from core.decode.options import DecodeOptions
from core.decode.window_feed import HeldMels, decode_source
from core.model.audio import load_audio
from core.model.mel import content_frames, mel_windows
from core.model.mel_file import MelSource
from tests.conftest import AUDIO

TIMING = ("ms", "ms_total", "cache_hit")      # clocks, and whether the shared encoder cache was warm


def comparable(events) -> list[dict]:
    return [{k: v for k, v in asdict(ev).items() if k not in TIMING} for ev in events]


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
def test_a_file_s_windows_and_held_windows_decode_alike(onnx_model, encoder_cache, long_audio, timestamps):
    """The first three windows, four with timestamps (which start at 0, 7, 14 and 19.64 s). Without timestamps
    the decoder samples timestamp tokens anyway, only to seek (the audio is longer than a window). The CLI reads a
    file window by window (MelSource); the studio and QA hold the clip's windows (HeldMels): one request each."""
    model, n = onnx_model, 4 if timestamps else 3
    options = DecodeOptions(max_tokens=24, timestamps=timestamps)
    requests = []

    def decode_one(mel, opts, n_frames):
        requests.append((mel.shape, opts.language, n_frames))
        return model.transcribe(mel, opts, encoder_cache=encoder_cache, n_frames=n_frames)

    held = first_windows(decode_source(HeldMels(mel_windows(long_audio), content_frames(long_audio)), options,
                                       lambda mel, opts, size: model.transcribe(mel, opts, n_frames=size,
                                                                                encoder_cache=encoder_cache)), n)
    by_window = first_windows(decode_source(MelSource.of_audio(long_audio), options, decode_one), n)
    assert comparable(by_window) == comparable(held)
    dones = [e for e in held if isinstance(e, DoneEvent)]
    assert len(dones) == len(requests) == n and all(shape == (1, 80, 3000) for shape, _, _ in requests)
    assert requests[0][1] is None and {lang for _, lang, _ in requests[1:]} == {"en"}   # detected once
    assert [d.window for d in dones] == list(range(n))
    if timestamps:      # Whisper's seek: windows start at the last timestamp, not on the 30 s grid
        assert any(d.offset_s % 30 for d in dones) and any(d.segments for d in dones)


def test_a_cancel_between_windows_ends_with_a_cancelled_done(long_audio):
    """The studio's Stop lands between two requests: no next window is sent, and the run still ends with a
    done, as a runner's cancelled request does."""
    cancelled = []

    def decode_one(mel, opts, n_frames):
        yield EncodedEvent(window=0, ms=1.0, language="en")
        cancelled.append(True)          # Stop pressed while the window decodes
        yield DoneEvent(window=0, reason="eot", tokens=[], text="", ms_total=1.0)

    events = list(decode_source(MelSource.of_audio(long_audio), DecodeOptions(), decode_one, lambda: bool(cancelled)))
    assert len(cancelled) == 1 and [type(e) for e in events] == [EncodedEvent, DoneEvent, DoneEvent]
    assert events[-1].reason == "cancelled" and events[-1].window == 1 and events[-1].offset_s == 30.0


def test_a_draft_goes_with_the_first_window_only(long_audio):
    drafts = []

    def decode_one(mel, opts, n_frames):
        drafts.append(list(opts.draft))
        yield DoneEvent(window=0, reason="eot", tokens=[], text="", ms_total=1.0)

    list(decode_source(MelSource.of_audio(long_audio), DecodeOptions(language="en", draft=[1, 2]), decode_one))
    assert drafts == [[1, 2], [], []]


def test_a_cancelled_window_ends_the_run(long_audio):
    calls = []

    def decode_one(mel, opts, n_frames):
        calls.append(n_frames)
        yield EncodedEvent(window=0, ms=1.0, language="en")
        yield DoneEvent(window=0, reason="cancelled", tokens=[], text="", ms_total=1.0)

    events = list(decode_source(MelSource.of_audio(long_audio), DecodeOptions(), decode_one))
    assert len(calls) == 1 and events[-1].reason == "cancelled"


def test_words_and_levels_window_by_window(onnx_model, encoder_cache, long_audio):
    """Per-window requests give the same words from a file's windows and from held ones, placed at each window's
    offset, and leave each window's loudness track for the EOT focus."""
    options = DecodeOptions(max_tokens=24, word_timestamps=True, language="en")
    whole = first_windows(decode_source(
        HeldMels(mel_windows(long_audio), content_frames(long_audio)), options,
        lambda mel, opts, n: onnx_model.transcribe(mel, opts, encoder_cache=encoder_cache, n_frames=n)), 2)
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


@pytest.mark.parametrize("clip", sorted(p.name for p in AUDIO.glob("*.wav")))
def test_every_client_sends_the_same_windows(clip):
    """The CLI reads a file window by window (MelSource.of_file); the studio and QA hold the clip's mel
    (HeldMels over mel_windows of the loaded samples). The seek loop hands the decoder the same bits either way,
    so on any backend every client's tokens are the CLI's."""
    samples = load_audio(AUDIO / clip)
    a, b = MelSource.of_file(AUDIO / clip), HeldMels(mel_windows(samples), content_frames(samples))
    assert a.n_frames == b.n_frames
    file_cursor, held_cursor = a.cursor(), b.cursor()
    for start in range(0, a.n_frames, 1733):    # starts off the 30 s grid too, as Whisper's seek makes them
        assert np.array_equal(file_cursor.at(start), held_cursor.at(start))
