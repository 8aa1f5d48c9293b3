"""Compare's per-token figures count only the tokens that ran a graph: a live run's tokens served from a draft
(about 0 ms each) are left out, as in the latency graph, and the verdict says how many there were."""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from app.runs.live import end_live, start_live
from app.runs.session import Session
from app.views.compare_panel import ComparePanel
from core.decode.events import DoneEvent, EncodedEvent
from tests.app.runs.test_exports import make_run, token


def live_run(session, passes: int = 6, tokens: int = 16, drafted_from: int = 4):
    """Each pass re-decodes the buffer: its first tokens come from the last pass's draft (0.05 ms each), the rest
    ran a graph (13 ms, with some spread)."""
    rng = np.random.default_rng(3)
    events = []
    for p in range(passes):
        events.append(EncodedEvent(p, 300.0, "en"))
        for i in range(tokens):
            drafted = p > 0 and 0 < i < drafted_from + 4 * p and i < tokens - 2
            ms = 0.05 if drafted else float(13.0 + rng.normal(0, 0.5))
            events.append(replace(token(p, i, 100 + i, " w", ms=ms), drafted=drafted))
        events.append(DoneEvent(p, "eot", list(range(100, 100 + tokens)), " w" * tokens, 99.0, "en"))
    run = make_run(session, events)
    start_live(run, run.audio_name)
    end_live(run, {"end": "end of stream", "text": "w " * tokens, "commits": [], "passes": [{}] * passes})
    return run


def offline_run(session, tokens: int = 16):
    rng = np.random.default_rng(5)
    events = [EncodedEvent(0, 900.0, "en")]
    events += [token(0, i, 100 + i, " w", ms=float(10.0 + rng.normal(0, 0.5))) for i in range(tokens)]
    events.append(DoneEvent(0, "eot", list(range(100, 100 + tokens)), " w" * tokens, 200.0, "en"))
    return make_run(session, events)


def non_drafted_median(run) -> float:
    return float(np.median([s.ms for s in run.transcript.steps if s.step > 0 and not s.drafted]))


def test_a_live_run_with_drafted_tokens_against_the_offline_run_of_the_same_clip(qtbot):
    session = Session()
    offline, live = offline_run(session), live_run(session)
    drafted = sum(s.drafted for s in live.transcript.steps)
    assert drafted > len(live.transcript.steps) // 3      # enough 0 ms tokens to skew a median that counts them
    panel = ComparePanel(session)
    qtbot.addWidget(panel)
    panel.refresh_runs()
    assert {panel.a.currentData(), panel.b.currentData()} == {offline.id, live.id}
    sentence = panel.verdict.text()
    shown = float(re.search(r"is ([\d.]+)× faster per token", sentence).group(1))
    truth = non_drafted_median(live) / non_drafted_median(offline)     # the offline run is the faster one here
    assert abs(shown - truth) <= 0.2 * truth, sentence
    assert f"#{offline.id} (" in sentence.split(" is ")[0], "the offline run is the faster per token"
    assert f"{drafted} of {len(live.transcript.steps)} tokens served from a draft" in sentence
    x, y = panel.curves[[panel.a.currentData(), panel.b.currentData()].index(live.id)].getData()
    assert len(y) == len(live.rows) - drafted and y.min() > 1.0, "the plot leaves the drafted tokens out too"


def test_runs_without_a_draft_say_nothing_of_one(qtbot):
    session = Session()
    for _ in range(2):
        offline_run(session)
    panel = ComparePanel(session)
    qtbot.addWidget(panel)
    panel.refresh_runs()
    assert "draft" not in panel.verdict.text() and "faster per token" in panel.verdict.text()
