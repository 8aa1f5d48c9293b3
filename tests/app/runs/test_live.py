"""A live stream as a run of the session, without Qt: passes recorded as windows, the committed text as the run's
text, its stop reason, the session JSON round trip, exports and compare."""
from __future__ import annotations

import json

from app.runs import exports
from app.runs.compare import compare
from app.runs.live import END_OF_STREAM, STOPPED, add_stream_events, end_live, recording_decoder, start_live
from app.runs.session import Session, run_from_dict
from core.decode.events import DoneEvent, EncodedEvent
from core.stream.events import Committed, Tentative
from tests.app.runs.test_exports import make_run, token


def one_pass(words: list[str], ms: float = 20.0):
    """A runner's answer to one pass: always window 0, as every pass is its own request."""
    toks = [token(0, i, 100 + i, w, ms=ms) for i, w in enumerate(words)]
    return [EncodedEvent(0, 300.0, "en")] + toks + [DoneEvent(0, "eot", [t.token for t in toks], "".join(words), 99.0,
                                                              "en")]


def fake_decoder(answers):
    answers = iter(answers)

    def decode_one(mel, options, n_frames):
        yield from next(answers)

    return decode_one


def stream_into(run, passes, clock=None):
    ticks = iter(range(1000))
    recorded = []
    decode = recording_decoder(fake_decoder(passes), lambda ev, ms: recorded.append((ev, ms)),
                               clock or (lambda: next(ticks) / 10))
    for _ in passes:
        for ev in decode(None, None, 0):
            if isinstance(ev, DoneEvent):
                break          # as core.stream.one_pass.run_pass does: closes the generator at done
    for ev, ms in recorded:
        run.add(ev, ms)
    return recorded


def commit(text, start, end):
    return Committed(text, start, end, end + 1.0, [{"word": text, "start": start, "end": end}])


def live_run(session, passes=((" Hello",), (" Hello", " world")), end=END_OF_STREAM):
    run = start_live(make_run(session, []), "clip.wav")
    stream_into(run, [one_pass(list(p)) for p in passes])
    add_stream_events(run, [commit(" Hello", 0.0, 0.5), Tentative(" wor", 0.5, 0.9, 1.5)])
    add_stream_events(run, [commit(" world", 0.5, 1.0)])
    return run


def test_each_pass_becomes_a_window_with_host_times_since_the_stream_began():
    session = Session()
    run = start_live(make_run(session, []), "mic")
    recorded = stream_into(run, [one_pass([" Hello"]), one_pass([" Hello", " world"])])
    assert [ev.window for ev, _ in recorded] == [0, 0, 0, 1, 1, 1, 1]
    assert [ms for _, ms in recorded] == [100.0 * i for i in range(1, 8)]   # the first tick is the stream's start
    assert [len(w.tokens) for w in run.finished_windows] == [1, 2]
    assert [r.x for r in run.rows] == [0, 1, 2] and run.decode_ms_per_token() == 20.0


def test_the_text_is_what_was_committed_and_the_label_says_live():
    session = Session()
    run = live_run(session)
    assert run.text() == "Hello world"                       # not "Hello Hello world", the passes one after another
    assert run.stop_reason is None and "live: clip.wav" in run.label() and run.label().endswith("2 passes · streaming")
    end_live(run, {"text": "Hello world", "commits": run.live["commits"], "audio_s": 1.2, "end": STOPPED})
    assert run.stop_reason == "stopped" and run.label().endswith("2 passes · stopped")
    assert run.live["source"] == "clip.wav"


def test_a_link_that_dies_keeps_the_committed_text_and_telemetry():
    session = Session()
    run = live_run(session)
    run.error = {"problem": "the runner stopped answering", "fix": "restart it", "code": "link"}
    end_live(run, {"text": "Hello world", "commits": run.live["commits"], "end": "error"})
    assert run.stop_reason == "error" and run.text() == "Hello world" and len(run.rows) == 3
    assert exports.transcript_txt(run) == "Hello world\n"


def test_session_json_round_trips_a_live_run_and_older_files_still_load():
    session = Session()
    offline = make_run(session, one_pass([" Hello", " world"]))
    run = live_run(session)
    end_live(run, {"text": "Hello world", "commits": run.live["commits"], "passes": [{"audio_s": 1.0}],
                   "audio_s": 1.2, "end": END_OF_STREAM})
    doc = json.loads(exports.session_json(session))
    again = Session.from_dict(doc)
    back = again.by_id(run.id)
    assert back.live == run.live and back.text() == "Hello world" and back.stop_reason == "end of stream"
    assert [r.event.token for r in back.rows] == [r.event.token for r in run.rows]
    assert [w.window for w in back.transcript.windows] == [0, 1]
    older = {k: v for k, v in doc["runs"][0].items() if k != "live"}     # a file from before live runs
    assert run_from_dict(older).live is None and run_from_dict(older).text() == offline.text()


def test_exports_of_a_live_run_use_its_commits():
    session = Session()
    run = live_run(session)
    assert exports.transcript_txt(run) == "Hello world\n"
    assert "00:00:00,500 --> 00:00:01,000\nworld" in exports.srt(run)
    assert exports.token_csv(run).count("\n") == 1 + 3


def test_compare_a_live_run_with_an_offline_run_scores_the_texts():
    session = Session()
    offline = make_run(session, one_pass([" Hello", " world"], ms=10.0))
    run = live_run(session)
    sentence = compare(run, offline).sentence()
    assert "10.0 ms" in sentence and "20.0 ms" in sentence and "live, cache on" in sentence
    assert f"Text of live #{run.id} against #{offline.id}: WER 0.0% (the same words)" in sentence
    assert "Tokens" not in sentence and "whole decode" not in sentence
    add_stream_events(run, [commit(" there", 1.0, 1.4)])
    assert "WER 50.0%" in compare(offline, run).sentence()


def test_a_pass_window_starts_where_its_buffer_starts_in_the_stream():
    """After the policy trims its buffer, a pass decodes audio from later in the stream: the recorded window
    (its encoded and done events) says where, so word times and the heatmap point at the stream's audio."""
    recorded, starts = [], iter([0.0, 12.5])
    decode = recording_decoder(fake_decoder([one_pass([" a"]), one_pass([" b"])]),
                               lambda ev, ms: recorded.append(ev), lambda: 0.0, lambda: next(starts))
    for _ in range(2):
        list(decode(None, None, 0))
    offsets = [(ev.window, ev.offset_s) for ev in recorded if isinstance(ev, (EncodedEvent, DoneEvent))]
    assert offsets == [(0, 0.0), (0, 0.0), (1, 12.5), (1, 12.5)]


def test_the_tentative_tail_follows_the_stream_and_the_summary_replaces_it():
    session = Session()
    run = start_live(make_run(session, []), "clip.wav")
    assert add_stream_events(run, [commit(" Hello", 0.0, 0.5), Tentative(" wor", 0.5, 0.9, 1.5)])
    assert (run.live["text"], run.live["tentative"]) == ("Hello", " wor")
    assert not add_stream_events(run, [Tentative(" wor", 0.5, 0.9, 1.6)])       # nothing new to draw
    end_live(run, {"text": "Hello world", "commits": [], "end": STOPPED})
    assert "tentative" not in run.live and run.text() == "Hello world"
