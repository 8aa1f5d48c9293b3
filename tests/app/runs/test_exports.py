"""Exports from synthetic runs: TXT and subtitles by core's rules (segments, window cues, no-speech windows,
a window cut off part-way), CSV and JSON round trip."""
from __future__ import annotations

import csv
import io
import json

import pytest

from app.runs import exports
from app.runs.compare import compare
from app.runs.session import Session
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from core.decode.timestamps import split_segments
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from tests.app.conftest import special_tokens

EOT = special_tokens().eot


def token(window, step, tok, text, ms=20.0, special=False):
    return TokenEvent(window=window, step=step, token=tok, text=text, logprob=-0.1, eot_prob=1e-4,
                      top=[(tok, -0.1), (11, -3.0)], cache_len=4 + step, cache_bytes=(4 + step) * 24576, ms=ms,
                      is_special=special)


def make_run(session, events, cache=True, duration=40.0):
    run = session.new_run("clip.wav", DecodeOptions(cache=cache), "local", {"backend": "numpy"}, duration)
    for i, ev in enumerate(events):
        run.add(ev, 100.0 + 10 * i)
    return run


def two_windows():
    return [EncodedEvent(0, 1500.0, "en"), token(0, 0, 1, " Hello"), token(0, 1, 2, " world"),
            token(0, 2, EOT, "", special=True), DoneEvent(0, "eot", [1, 2], " Hello world", 1600.0, "en"),
            EncodedEvent(1, 1400.0, "en"), token(1, 0, 3, " again"), DoneEvent(1, "max_tokens", [3], " again", 1500.0)]


def test_window_cues_srt_vtt():
    run = make_run(Session(), two_windows())
    assert run.text() == "Hello world again"
    assert exports.srt(run) == ("1\n00:00:00,000 --> 00:00:30,000\nHello world\n\n"
                                "2\n00:00:30,000 --> 00:00:40,000\nagain\n")
    assert exports.vtt(run).startswith("WEBVTT\n\n00:00:00.000 --> 00:00:30.000\nHello world\n")


@pytest.fixture(scope="module")
def tok():
    return WhisperTokenizer.from_file(find_tokenizer())


@pytest.mark.parametrize("audio_frames, last_end", [(300, "00:00:02,500"), (200, "00:00:02,000")])
def test_timestamp_tokens_give_real_cue_times_clamped_to_the_audio(tok, audio_frames, last_end):
    """The runner's segments come from core's segmenter; a stamp past the audio's end is cut back to it."""
    ts = tok.special.timestamp_begin
    hi, there = tok.encode(" Hi"), tok.encode(" there")
    sampled = [ts + 10, *hi, ts + 60, ts + 60, *there, ts + 125]
    segments, _ = split_segments(sampled, tok, 0.0, audio_frames)
    events = [EncodedEvent(0, 1.0)]
    events += [token(0, i, t, "" if t >= ts else tok.decode([t]), special=t >= ts) for i, t in enumerate(sampled)]
    events += [DoneEvent(0, "eot", sampled, " Hi there", 2.0,
                         segments=[{"start": g.start, "end": g.end, "text": g.text} for g in segments])]
    srt = exports.srt(make_run(Session(), events, duration=audio_frames / 100))
    assert srt == f"1\n00:00:00,200 --> 00:00:01,200\nHi\n\n2\n00:00:01,200 --> {last_end}\nthere\n"


def test_a_no_speech_window_is_left_out_of_txt_and_subtitles():
    events = two_windows()
    events[-1] = DoneEvent(1, "eot", [3], " again", 1500.0, no_speech_prob=0.9, avg_logprob=-2.0)
    run = make_run(Session(), events)
    assert exports.transcript_txt(run) == "Hello world\n"
    assert exports.srt(run) == "1\n00:00:00,000 --> 00:00:30,000\nHello world\n"


def test_a_window_cut_off_part_way_keeps_its_tokens():
    run = make_run(Session(), two_windows()[:-1], duration=35.0)     # the link was lost before window 1's done
    run.error = {"problem": "the link to local closed", "fix": "retry", "code": "link_lost"}
    assert run.stop_reason == "error" and run.text() == "Hello world again"
    assert exports.vtt(run).endswith("00:00:30.000 --> 00:00:35.000\nagain\n")


def test_runner_segments_win_over_everything():
    events = [EncodedEvent(0, 1.0), token(0, 0, 1, " Hi"), token(0, 1, 2, " there"),
              DoneEvent(0, "eot", [1, 2], " Hi there", 2.0, segments=[{"start": 0.4, "end": 1.1, "text": " Hi"},
                                                                     {"start": 1.1, "end": 2.6, "text": " there"}])]
    assert exports.srt(make_run(Session(), events)) == ("1\n00:00:00,400 --> 00:00:01,100\nHi\n\n"
                                                        "2\n00:00:01,100 --> 00:00:02,600\nthere\n")


def test_csv_and_session_json_round_trip():
    session = Session()
    run = make_run(session, two_windows())
    rows = list(csv.DictReader(io.StringIO(exports.token_csv(run))))
    assert [r["step"] for r in rows] == ["0", "1", "2", "3"]
    assert rows[1]["text"] == " world" and rows[1]["cache_len"] == "5"
    again = Session.from_dict(json.loads(exports.session_json(session)))
    assert again.runs[0].text() == run.text()
    assert [r.host_ms for r in again.runs[0].rows] == [r.host_ms for r in run.rows]


def test_compare_names_the_faster_run():
    session = Session()
    fast = make_run(session, [token(0, i, i + 1, "x", ms=10.0) for i in range(5)])
    slow = make_run(session, [token(0, i, i + 1, "x", ms=40.0) for i in range(5)], cache=False)
    c = compare(slow, fast)
    assert c.faster is fast and c.per_token_speedup == 4.0 and c.same_tokens
    assert "4.0× faster per token" in c.sentence() and "cache on" in c.sentence()
