"""Compare runs shows each run's cross-attention cache, so the kv and absorbed forms' memory is side by side."""
from __future__ import annotations

from app.runs.compare import compare, cross_cache, cross_text
from app.runs.session import Session
from core.decode.events import EncodedEvent
from tests.app.runs.test_exports import make_run, token

KV_BYTES, F_BYTES = 2 * 6 * 1500 * 512 * 4, 1500 * 512 * 4


def run_with(session, form: str, size: int, ms: float):
    encoded = EncodedEvent(0, 900.0, "en", cross_form=form, cross_bytes=size)
    return make_run(session, [encoded] + [token(0, i, i + 1, "x", ms=ms) for i in range(5)])


def test_compare_puts_both_cross_caches_in_the_verdict():
    session = Session()
    kv, absorbed = run_with(session, "kv", KV_BYTES, 10.0), run_with(session, "absorbed", F_BYTES, 12.0)
    assert cross_cache(kv) == ("kv", KV_BYTES) and cross_cache(absorbed) == ("absorbed", F_BYTES)
    sentence = compare(absorbed, kv).sentence()
    assert f"#{kv.id}: cross K/V 36.9 MB" in sentence and f"#{absorbed.id}: cross F 3.1 MB (absorbed)" in sentence
    assert "absorbed cross" in sentence and "Tokens identical" in sentence


def test_a_runner_that_does_not_report_its_cross_cache_adds_nothing():
    session = Session()
    older = make_run(session, [EncodedEvent(0, 900.0, "en")] + [token(0, i, i + 1, "x") for i in range(3)])
    assert cross_cache(older) is None and cross_text(older) == ""
    other = run_with(session, "kv", KV_BYTES, 10.0)
    assert "cross" not in compare(older, other).sentence()
