"""A session stores each run's arrays once, compactly: the tokens' attention in one deflated block per run, not as
base64 in every token event (a session of 14 runs was 23 MB), and reads back exactly; a format-1 file still reads."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from app.runs import exports
from app.runs.session import Session, run_to_dict
from core.decode.events import EncodedEvent, attention_to_dict, event_to_dict
from tests.app.runs.test_exports import make_run, token
from tests.core.decode.crafted_attention import attention_at


def attention_run(session, steps: int = 40):
    """Tokens whose heads look along the audio, with the spread of real weights (not a constant pattern)."""
    rng = np.random.default_rng(7)
    events = [EncodedEvent(0, 900.0, "en")]
    for i in range(steps):
        a = (attention_at(20 + 9 * i).astype(np.float32) * (1 + 0.5 * rng.random((8, 1500)))).astype(np.float16)
        events.append(replace(token(0, i, 100 + i, " w"), attention=a))
    return make_run(session, events)


def test_the_attention_is_stored_once_a_run_and_smaller_than_its_raw_bytes():
    session = Session()
    runs = [attention_run(session), attention_run(session, 25)]
    raw = sum(r.event.attention.nbytes for run in runs for r in run.rows)
    text = exports.session_json(session)
    assert len(text.encode()) < 0.8 * raw, (len(text), raw)      # base64 in each event: over 1.33x
    doc = json.loads(text)
    assert all("attention" not in ev for run in doc["runs"] for ev in run["events"])
    assert [len(run["arrays"]["attention"]) for run in doc["runs"]] == [1, 1]
    again = Session.from_dict(doc)
    for before, after in zip(runs, again.runs):
        assert len(after.rows) == len(before.rows)
        for a, b in zip(before.rows, after.rows):
            assert b.event.attention.dtype == np.float16 and np.array_equal(a.event.attention, b.event.attention)
            assert replace(b.event, attention=None) == replace(a.event, attention=None)


def test_a_format_1_session_with_attention_in_each_event_still_reads():
    session = Session()
    run = attention_run(session, 3)
    old = run_to_dict(run)
    del old["arrays"]
    old["events"] = [dict(event_to_dict(ev), host_arrival_ms=t) for ev, t in zip(run.events, run.arrivals_ms)]
    assert "fp16" in json.dumps(old["events"][1]["attention"]) and old["events"][1]["attention"] == attention_to_dict(
        run.rows[0].event.attention)
    back = Session.from_dict({"format": "whisperkv-session/1", "runs": [old]}).runs[0]
    assert np.array_equal(back.rows[2].event.attention, run.rows[2].event.attention)
