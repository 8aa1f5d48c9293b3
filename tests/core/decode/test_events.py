"""Events to wire dicts and back: what the runner sends is what the host rebuilds."""
from __future__ import annotations

import json

import numpy as np

from core.decode.events import DoneEvent, TokenEvent, event_from_dict, event_to_dict
from core.decode.quality import window_quality


def token_event(**kw) -> TokenEvent:
    return TokenEvent(window=0, step=3, token=1012, text=" ask", logprob=-0.25, eot_prob=0.01,
                      top=[(1012, -0.25), (437, -1.75)], cache_len=7, cache_bytes=7 * 24576, ms=5.5,
                      text_bytes="2061736b", entropy=0.5, **kw)


def test_a_token_event_survives_the_wire_with_its_attention():
    attention = np.arange(6 * 1500, dtype=np.float16).reshape(6, 1500) / 9000
    ev = token_event(attention=attention)
    back = event_from_dict(json.loads(json.dumps(event_to_dict(ev))))
    assert back.top == ev.top and back.text == ev.text and back.entropy == ev.entropy
    np.testing.assert_array_equal(back.attention, attention)
    assert ev.attention is attention        # the event itself is left as it was


def test_a_token_event_without_attention_has_no_attention_key():
    d = event_to_dict(token_event())
    assert "attention" not in d and d["type"] == "token" and d["top"] == [(1012, -0.25), (437, -1.75)]


def test_a_done_event_keeps_its_nested_quality():
    q = window_quality("and so my fellow americans", -0.2, 0.01, 0.4)
    ev = DoneEvent(window=0, reason="eot", tokens=[1, 2], text="x", ms_total=12.0, quality=q)
    back = event_from_dict(json.loads(json.dumps(event_to_dict(ev))))
    assert back.quality == q and back.reason == "eot"
