"""Every value the runner's writer can send, the host's reader takes back: events with floats that are not
finite (JSON has none, so they travel as null, docs/protocol.md) through the real writer and the real reader."""
from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.decode.events import DoneEvent, EncodedEvent, TokenEvent, event_from_dict, event_to_dict
from core.decode.quality import WindowQuality
from device import protocol as P
from device.runner.serve.writer import Writer


def through_the_wire(ev) -> object:
    """`ev` as the runner writes it (event_to_dict, then Writer's frame) and as the host reads it back."""
    r, w = os.pipe()
    try:
        Writer(w).send({**event_to_dict(ev), "id": "r1"})
        os.close(w)
        data = b""
        while chunk := os.read(r, 1 << 16):
            data += chunk
    finally:
        os.close(r)
    (frame,) = P.FrameParser().feed(data)
    assert isinstance(frame, P.Frame), frame
    return event_from_dict(frame.header)


def test_a_top_k_with_a_forbidden_token_is_read_back_without_it():
    """The crash of the one-hour run: at a window's end the timestamp rules left 3 tokens possible, so the
    top-5 held two -inf that the writer sent as null, and the reader called float(None)."""
    ev = TokenEvent(window=0, step=97, token=51862, text="", logprob=-0.02, eot_prob=0.0,
                    top=[(51862, -0.02), (51863, -4.2), (51864, -6.0), (0, -math.inf), (1, -math.inf)],
                    cache_len=101, cache_bytes=101 * 24576, ms=2.0, is_special=True)
    back = through_the_wire(ev)
    assert back.top == [(51862, -0.02), (51863, -4.2), (51864, -6.0)]
    assert back.logprob == -0.02 and back.token == 51862


# Every float field of every event type, with values that are not finite among the ordinary ones. No subnormals:
# a library loaded earlier in the test process (compiled to flush them to zero) leaves hypothesis unable to make
# them, and they are not what this is about.
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=False, width=32),
                   st.sampled_from([math.inf, -math.inf, math.nan]))


def same_number(name: str, sent: float, got: float) -> bool:
    """What the reader promises: a finite float comes back as it was; one that is not finite comes back as
    -inf for a log-probability (log 0) and NaN for anything else."""
    if math.isfinite(sent):
        return got == sent
    return got == -math.inf if name in ("logprob", "avg_logprob") else math.isnan(got)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(ms=floats, probs=st.lists(floats, max_size=3), offset=floats)
def test_an_encoded_event_round_trips_with_any_floats(ms, probs, offset):
    ev = EncodedEvent(window=2, ms=ms, language="en", language_probs={f"l{i}": p for i, p in enumerate(probs)},
                      offset_s=offset, cross_form="kv", cross_bytes=36864000)
    back = through_the_wire(ev)
    assert same_number("ms", ms, back.ms) and same_number("offset_s", offset, back.offset_s)
    assert back.language_probs.keys() == ev.language_probs.keys()
    assert all(same_number(k, p, back.language_probs[k]) for k, p in ev.language_probs.items())


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(scalars=st.fixed_dictionaries({k: floats for k in ("logprob", "eot_prob", "ms", "entropy", "temperature")}),
       top=st.lists(floats, max_size=6), attention=st.lists(floats, min_size=4, max_size=4))
def test_a_token_event_round_trips_with_any_floats(scalars, top, attention):
    with np.errstate(over="ignore"):     # a float32 beyond fp16's range becomes inf, which is also sent
        att = np.array(attention, np.float32).astype(np.float16).reshape(2, 2)
    ev = TokenEvent(window=0, step=1, token=7, text="x", top=[(i, lp) for i, lp in enumerate(top)], cache_len=5,
                    cache_bytes=5 * 24576, attention=att, **scalars)
    back = through_the_wire(ev)
    assert all(same_number(k, v, getattr(back, k)) for k, v in scalars.items())
    # only the candidates the rules allowed, in order; a forbidden (-inf) or unknown (NaN) one is left out
    assert back.top == [(i, lp) for i, lp in enumerate(top) if math.isfinite(lp)]
    np.testing.assert_array_equal(back.attention, att)   # fp16 bytes: NaN and ±inf travel as they are


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(scalars=st.fixed_dictionaries({k: floats for k in ("ms_total", "no_speech_prob", "avg_logprob", "offset_s")}),
       quality=st.fixed_dictionaries({k: floats for k in ("compression_ratio", "avg_logprob", "no_speech_prob",
                                                          "mean_entropy", "temperature")}),
       times=st.lists(floats, min_size=5, max_size=5))
def test_a_done_event_round_trips_with_any_floats(scalars, quality, times):
    start, end, w_start, w_end, p = times
    ev = DoneEvent(window=1, reason="eot", tokens=[1, 2], text=" hi", segments=[{"start": start, "end": end,
                   "text": " hi"}], words=[{"word": " hi", "start": w_start, "end": w_end, "probability": p}],
                   quality=WindowQuality(**quality, fallbacks=["compression ratio 3.10 > 2.4 at T=0.0"]), **scalars)
    back = through_the_wire(ev)
    assert all(same_number(k, v, getattr(back, k)) for k, v in scalars.items())
    assert all(same_number(k, v, getattr(back.quality, k)) for k, v in quality.items())
    assert back.quality.fallbacks == ev.quality.fallbacks
    assert back.segments[0]["text"] == " hi" and back.words[0]["word"] == " hi"
    for name, sent, got in (("start", start, back.segments[0]["start"]), ("end", end, back.segments[0]["end"]),
                            ("start", w_start, back.words[0]["start"]), ("end", w_end, back.words[0]["end"]),
                            ("probability", p, back.words[0]["probability"])):
        assert same_number(name, sent, got)
