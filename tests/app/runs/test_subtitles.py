"""SRT and VTT cues never overlap, whatever made them: a live stream's commits (they overlapped by 20 ms), word
times from two windows, or a cue shorter than the overlap."""
from __future__ import annotations

import re

from app.runs import exports
from app.runs.live import end_live, start_live
from app.runs.session import Session
from core.decode import subtitles
from tests.app.runs.test_exports import make_run


def times(text: str, sep: str) -> list[tuple[float, float]]:
    stamp = r"(\d\d):(\d\d):(\d\d)" + re.escape(sep) + r"(\d\d\d)"
    out = []
    for m in re.finditer(stamp + " --> " + stamp, text):
        g = [int(x) for x in m.groups()]
        out.append((g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000, g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000))
    return out


def assert_apart(spans):
    assert spans, "no cues"
    for (start, end), (next_start, _) in zip(spans, spans[1:]):
        assert start <= end <= next_start, spans


def live_run_with_commits(commits):
    run = make_run(Session(), [])
    start_live(run, "clip.wav")
    end_live(run, {"end": "end of stream", "text": " ".join(t for t, _, _ in commits),
                   "commits": [{"text": t, "start_s": a, "end_s": b} for t, a, b in commits]})
    return run


def test_a_live_streams_commits_that_overlap_give_cues_that_do_not():
    run = live_run_with_commits([(" Hello there.", 0.0, 1.52), (" How are you?", 1.50, 3.02), (" Fine.", 3.0, 3.9)])
    for text, sep in ((exports.srt(run), ","), (exports.vtt(run), ".")):
        spans = times(text, sep)
        assert len(spans) == 3
        assert_apart(spans)
        assert spans[0][0] == 0.0 and spans[-1][1] == 3.9      # nothing moved but the overlaps
    text = exports.srt(run)
    assert text.index("Hello there.") < text.index("How are you?") < text.index("Fine.")


def test_cues_from_any_source_are_kept_apart_even_when_one_starts_where_another_does():
    cues = [subtitles.Cue(2.0, 4.0, "b"), subtitles.Cue(0.0, 2.5, "a"), subtitles.Cue(2.0, 2.01, "c"),
            subtitles.Cue(5.0, 6.0, "d")]
    spans = times(subtitles.srt(cues), ",")
    assert len(spans) == 4
    assert_apart(spans)
    assert all(end > start for start, end in spans), "no cue is cut to nothing"
    assert spans[-1] == (5.0, 6.0)                               # a cue clear of the others is untouched
