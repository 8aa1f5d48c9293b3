"""A stream's passes in encoder windows sized to their buffers (issue 55), through the local runner: each pass asks
for the smallest window its buffer fits (the window parameters' rule, core/decode/window_choice.py), the runner
encodes that one, AlignAtt reads attention rows of that window's positions, a pass that loops is heard again in the
next window up, and a floor of 30 s is the stream before windows were sized."""
from dataclasses import replace

import pytest

from core.decode.window_choice import pass_window
from core.model.audio import load_audio
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from core.qa.scoring import error_rate
from core.stream.events import PassRecord
from core.stream.feed import blocks_of
from core.stream.one_pass import run_pass
from core.stream.policy import StreamConfig
from core.stream.session import StreamSession
from device.link.decoder import RunnerDecoder
from tests.conftest import AUDIO
from tests.core.stream.counting import counting_decoder


@pytest.fixture(scope="module")
def tokenizer():
    return WhisperTokenizer.from_file(find_tokenizer())


@pytest.fixture(scope="module")
def congrats():
    return load_audio(AUDIO / "en_asterisk_demo-congrats.wav")     # 30 s of English


def passes(session) -> list[PassRecord]:
    return [e for e in session.events if isinstance(e, PassRecord)]


def stream(local_client, tokenizer, audio, **params):
    counting, calls = counting_decoder(local_client)
    config = StreamConfig(language="en", policy="alignatt",
                          params={"min_chunk_s": 2.0, "window_floor_s": 10.0, **params})
    session = StreamSession(counting, tokenizer, config, vad=False, windows=local_client.info.windows)
    return session, session.run(blocks_of(audio), live=False), calls


def test_each_pass_asks_for_the_smallest_window_its_buffer_fits(local_client, tokenizer, congrats):
    assert local_client.info.windows == (10, 20, 30)
    audio = congrats[:int(19.4 * 16000)]      # to the pause at 19.3 s: buffers fill 10 s and 20 s windows
    sized, doc, calls = stream(local_client, tokenizer, audio)
    records = passes(sized)
    assert len(records) == len(calls) > 5
    last = None
    for record, n_frames in zip(records, calls):
        heard = (record.buffer_start_s, record.audio_s)
        if last is not None and heard == last[0]:       # a pass that looped, heard again in the next window up
            assert record.window_s > last[1]
        else:
            assert record.window_s == pass_window(n_frames, (10, 20, 30), True)     # what the runner encoded
        last = heard, record.window_s
    assert {r.window_s for r in records} >= {10, 20}
    # A floor of 30 s: every pass in Whisper's own window, as before windows were sized.
    whole, whole_doc, _ = stream(local_client, tokenizer, audio, window_floor_s=30.0)
    assert {r.window_s for r in passes(whole)} == {30} and whole_doc["window_floor_s"] == 30.0
    assert doc["text"] and error_rate(whole_doc["text"], doc["text"]) <= 0.1


def test_a_pass_in_a_short_window_reads_attention_rows_of_that_window(local_client, tokenizer, congrats):
    from core.decode.options import DecodeOptions

    audio = congrats[:6 * 16000]
    options = DecodeOptions(language="en", word_timestamps=True, window_s=10)
    result = run_pass(RunnerDecoder(local_client).window, tokenizer, audio, 0.0, options)
    assert result.record.window_s == 10 and result.words
    assert result.attention.shape[1:] == (8, 500)              # 10 s: 500 positions of 20 ms
    assert result.words[-1].end <= 6.0 + 0.5


def test_the_warm_up_runs_each_window_a_pass_may_use(local_client, tokenizer, congrats):
    counting, calls = counting_decoder(local_client)
    config = StreamConfig(language="en", params={"window_floor_s": 15.0})
    session = StreamSession(counting, tokenizer, config, vad=False, windows=(10, 20, 30))
    assert session.windows_used == (20, 30)
    session.run(blocks_of(congrats[:3 * 16000]), live=False, warm=True)
    assert len(calls) == 2 + len(passes(session))


def test_a_pass_that_loops_in_a_short_window_is_heard_again_in_the_next(local_client, tokenizer, congrats):
    real = RunnerDecoder(local_client).window
    asked = []

    def looping_at_10_s(mel, options, n_frames):
        asked.append(options.window_s)
        if options.window_s == 10:
            options = replace(options, max_tokens=3)     # it runs to its token cap, as a repetition loop does
        return real(mel, options, n_frames)

    config = StreamConfig(language="en", policy="alignatt", params={"min_chunk_s": 2.0, "window_floor_s": 10.0})
    session = StreamSession(looping_at_10_s, tokenizer, config, vad=False, windows=(10, 20, 30))
    doc = session.run(blocks_of(congrats[:7 * 16000]), live=False)
    assert asked == [r.window_s for r in passes(session)] and asked[:2] == [10, 20]
    assert all(nxt == 20 for w, nxt in zip(asked, asked[1:]) if w == 10) and asked[-1] == 20
    # What is committed is what the 20 s passes heard: the stream of a 20 s floor, word for word.
    floor_20 = StreamConfig(language="en", policy="alignatt", params={"min_chunk_s": 2.0, "window_floor_s": 20.0})
    twenty = StreamSession(real, tokenizer, floor_20, vad=False, windows=(10, 20, 30))
    assert doc["text"] == twenty.run(blocks_of(congrats[:7 * 16000]), live=False)["text"] and doc["text"]


def test_the_passes_before_the_language_is_known_encode_whisper_s_whole_window(local_client, tokenizer, congrats):
    # Whisper tells languages apart over 30 s: a 1 s buffer in a 10 s window heard an English "And" as Italian.
    def windows_asked(language):
        asked = []

        def recording(mel, options, n_frames):
            asked.append(options.window_s)
            return real(mel, options, n_frames)

        config = StreamConfig(language=language, policy="alignatt",
                              params={"min_chunk_s": 2.0, "window_floor_s": 10.0})
        session = StreamSession(recording, tokenizer, config, vad=False, windows=local_client.info.windows)
        return asked, session.run(blocks_of(congrats[:3 * 16000]), live=False, warm=False)

    real = RunnerDecoder(local_client).window
    detected, doc = windows_asked(None)
    assert detected == [30, 10] and doc["language"] == "en" and doc["text"]
    assert windows_asked("en")[0] == [10, 10]
    assert StreamConfig(language="auto").language is None and StreamConfig(language="").language is None
