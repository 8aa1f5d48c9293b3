"""How long a listener waits for the text, as streaming peers report it (times in seconds of the stream clock:
`emitted_s` of an event minus where the speech it shows is in the audio).

- first visible: from the start of the first spoken word to the first text on screen, tentative (any text,
  committed or not) and committed apart;
- end of file: from the end of the last word to the commit that holds it (how long after the speaker stops
  the transcript is complete);
- commit lag: `emitted_s - end_s` of each commit, at p50, p90 and p95 (core/stream/stats.py).

Where the first word starts: `speech_start_s` when the caller knows it (a benchmark passes the offline
transcript's first word, the same for every policy), else the first committed word's own timing.
"""
from __future__ import annotations

from core.stream.events import Committed, StreamEvent, Tentative


def latency_figures(events: list[StreamEvent], speech_start_s: float | None = None) -> dict:
    commits = [e for e in events if isinstance(e, Committed) and e.words]
    if not commits:
        return {"first_visible_s": {"tentative": None, "committed": None}, "end_of_file_s": None}
    start = commits[0].words[0]["start"] if speech_start_s is None else speech_start_s
    shown = [e.emitted_s for e in events if isinstance(e, (Committed, Tentative)) and e.text.strip()]
    last = commits[-1]
    return {
        "first_visible_s": {"tentative": round(min(shown) - start, 3),
                            "committed": round(commits[0].emitted_s - start, 3)},
        "end_of_file_s": round(last.emitted_s - last.words[-1]["end"], 3),
    }
