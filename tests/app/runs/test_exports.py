"""Exports from synthetic runs: subtitle timing from timestamp tokens and from windows, CSV and JSON round trip."""
from __future__ import annotations

import csv
import io
import json

from app.runs import exports
from app.runs.compare import compare
from app.runs.options import RunOptions
from app.runs.session import Session
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent


def token(window, step, tok, text, ms=20.0, special=False):
    return TokenEvent(window=window, step=step, token=tok, text=text, logprob=-0.1, eot_prob=1e-4,
                      top=[(tok, -0.1), (11, -3.0)], cache_len=4 + step, cache_bytes=(4 + step) * 24576, ms=ms,
                      is_special=special)


def make_run(session, events, cache=True, duration=40.0):
    run = session.new_run("clip.wav", RunOptions(cache=cache), "local", {"backend": "numpy"}, duration)
    for i, ev in enumerate(events):
        run.add(ev, 100.0 + 10 * i)
    return run


def two_windows():
    return [EncodedEvent(0, 1500.0, "en"), token(0, 0, 1, " Hello"), token(0, 1, 2, " world"),
            token(0, 2, 50257, "", special=True), DoneEvent(0, "eot", [1, 2], " Hello world", 1600.0, "en"),
            EncodedEvent(1, 1400.0, "en"), token(1, 0, 3, " again"), DoneEvent(1, "max_tokens", [3], " again", 1500.0)]


def test_window_cues_srt_vtt():
    run = make_run(Session(), two_windows())
    assert run.text() == "Hello world again"
    assert exports.srt(run) == ("1\n00:00:00,000 --> 00:00:30,000\nHello world\n\n"
                                "2\n00:00:30,000 --> 00:00:40,000\nagain\n")
    assert exports.vtt(run).startswith("WEBVTT\n\n00:00:00.000 --> 00:00:30.000\nHello world\n")


def test_timestamp_tokens_give_real_cue_times():
    ts = exports.TIMESTAMP_BEGIN
    events = [EncodedEvent(0, 1.0), token(0, 0, ts + 10, "", special=True), token(0, 1, 1, " Hi"),
              token(0, 2, ts + 60, "", special=True), token(0, 3, ts + 60, "", special=True),
              token(0, 4, 2, " there"), token(0, 5, ts + 125, "", special=True),
              DoneEvent(0, "eot", [1, 2], " Hi there", 2.0)]
    cues = exports.cues(make_run(Session(), events))
    assert [(c.start, c.end, c.text) for c in cues] == [(0.2, 1.2, "Hi"), (1.2, 2.5, "there")]


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
