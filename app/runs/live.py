"""A live stream as a run of the session: the runner events of every pass recorded into a RunRecord (one
window per pass), and its committed text and stream summary kept on the record.

Qt-free: the live worker wraps its decoder with `recording_decoder`, the window folds the batches in."""
from __future__ import annotations

import itertools
import time
from dataclasses import replace
from typing import Callable

from app.runs.record import RunRecord
from core.decode.window_feed import DecodeOne
from core.stream.events import Committed, Tentative

STOPPED, END_OF_STREAM = "stopped", "end of stream"

Sink = Callable[[object, float], None]    # (runner event renumbered to its pass, host ms since the stream began)


def recording_decoder(decode_one: DecodeOne, sink: Sink, clock: Callable[[], float] = time.monotonic,
                      buffer_start_s: Callable[[], float] = lambda: 0.0) -> DecodeOne:
    """`decode_one` that also hands every event it yields to `sink`, its window set to the pass's index: every
    pass is a request for window 0, and the run's transcript must keep the passes apart. `buffer_start_s()`
    says where the pass's buffer starts in the stream: the recorded window starts there, so its word times and
    attention columns point at the stream's audio, not at the trimmed buffer's."""
    t0 = clock()
    passes = itertools.count()

    def decode(mel, options, n_frames):
        index, offset = next(passes), round(buffer_start_s(), 3)
        events = decode_one(mel, options, n_frames)
        try:
            for ev in events:
                recorded = replace(ev, window=index)
                if hasattr(recorded, "offset_s"):
                    recorded = replace(recorded, offset_s=offset)
                sink(recorded, (clock() - t0) * 1e3)
                yield ev
        finally:
            getattr(events, "close", lambda: None)()

    return decode


def start_live(run: RunRecord, source: str) -> RunRecord:
    """Mark `run` as a live stream of `source` ("mic" or the clip's name); nothing committed yet."""
    run.live = {"source": source, "text": "", "tentative": "", "commits": []}
    return run


def add_stream_events(run: RunRecord, events: list) -> bool:
    """Fold the stream's committed text into the run as it is confirmed, and its tentative tail while it streams
    (the summary replaces both at the end). True when the text changed."""
    live, before = run.live, (run.live["text"], run.live.get("tentative", ""))
    for ev in events:
        if isinstance(ev, Tentative):
            live["tentative"] = ev.text
        elif isinstance(ev, Committed):
            live["text"] = (live["text"] + ev.text).strip()
            live["commits"].append({"text": ev.text, "start_s": ev.start_s, "end_s": ev.end_s,
                                    "emitted_s": ev.emitted_s, "words": ev.words})
    return (live["text"], live["tentative"]) != before


def end_live(run: RunRecord, summary: dict) -> None:
    """The stream ended (its summary says how: stopped, end of stream, or error) and what it committed."""
    run.live = {"source": run.live.get("source", "") if run.live else ""} | summary
    if not run.duration_s:
        run.duration_s = float(summary.get("audio_s") or 0.0)
