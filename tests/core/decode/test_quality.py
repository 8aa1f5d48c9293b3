"""Window-quality signals against openai-whisper's thresholds, the entropy computed in the decode loop,
and the sampling the temperature fallback draws with."""
import zlib

import numpy as np

from core.decode.events import DoneEvent, event_from_dict, event_to_dict
from core.decode.logit_rules import LogitRules, log_softmax
from core.decode.options import DecodeOptions
from core.decode.quality import WindowQuality, compression_ratio, window_quality


def test_compression_ratio_is_whispers():
    text = " ask not what your country can do for you" * 6
    raw = text.encode()
    assert compression_ratio(text) == len(raw) / len(zlib.compress(raw))
    assert compression_ratio(text) > 2.4 > compression_ratio(" And so my fellow Americans, ask not.")
    assert compression_ratio("") == 0.0


def test_failures_and_the_fallback_rule():
    clean = window_quality(" Hello there.", -0.2, 0.01, 0.3)
    assert clean.failures() == [] and not clean.needs_fallback() and not clean.silent
    loop = window_quality(" la" * 100, -0.3, 0.01, 0.2)
    assert loop.failures() == [f"compression ratio {loop.compression_ratio:.2f} > 2.4"] and loop.needs_fallback()
    unsure = WindowQuality(1.2, -1.4, 0.3, 2.0)
    assert unsure.failures() == ["avg logprob -1.40 < -1.0"] and unsure.needs_fallback()
    # whisper: a window under the no-speech rule is silence, not a bad decode, and is never re-decoded
    silence = WindowQuality(1.0, -1.4, 0.9, 1.0)
    assert silence.silent and not silence.needs_fallback()
    assert silence.failures() == ["avg logprob -1.40 < -1.0", "no-speech 0.90 > 0.6"]
    assert not WindowQuality(1.0, -0.5, 0.9, 1.0).silent        # confident text over a high p(no speech)


def test_fallback_verdict_names_each_fallback():
    first = WindowQuality(3.1, -0.2, 0.0, 0.1, temperature=0.0)
    second = WindowQuality(1.3, -1.2, 0.0, 0.1, temperature=0.2)
    final = WindowQuality(1.4, -0.4, 0.0, 0.9, temperature=0.4,
                          fallbacks=[first.fallback_note(), second.fallback_note()])
    assert final.fallback_verdict() == ("re-decoded at T=0.4 after compression ratio 3.10 > 2.4 at T=0.0; "
                                        "avg logprob -1.20 < -1.0 at T=0.2")
    assert WindowQuality().fallback_verdict() == ""


def test_quality_travels_on_the_done_event():
    q = window_quality(" hi", -0.1, 0.02, 0.5, 0.2, ["compression ratio 3.00 > 2.4 at T=0.0"])
    done = DoneEvent(window=0, reason="eot", tokens=[1], text=" hi", ms_total=1.0, quality=q)
    d = event_to_dict(done)
    assert d["quality"]["compression_ratio"] == q.compression_ratio and d["quality"]["fallbacks"] == q.fallbacks
    assert event_from_dict(d).quality == q
    assert event_from_dict({k: v for k, v in d.items() if k != "quality"}).quality is None   # an older runner


def rules_for(tokenizer, n_vocab=51865):
    return LogitRules(tokenizer, DecodeOptions(), n_vocab)


def test_entropy_equals_the_full_distribution_s(model):
    rules = rules_for(model.tokenizer)
    rng = np.random.default_rng(1)
    for scale in (0.5, 3.0, 20.0):           # flat to peaked
        logits = (rng.standard_normal(51865) * scale).astype(np.float32)
        x = rules.apply(logits.copy(), [5]).astype(np.float64)
        lp = log_softmax(x).astype(np.float64)
        p = np.exp(lp)
        expect = -np.sum(p[p > 0] * lp[p > 0])
        pick = rules.pick(logits.copy(), [5])
        assert abs(pick.entropy - expect) < 1e-3 * max(1.0, expect), (scale, pick.entropy, expect)


def test_logprobs_hold_for_logits_far_outside_the_unshifted_exp_range(model):
    """pick()'s logprobs and entropy are log_softmax's with the max logit moderate, far above float32's exp range,
    or so far below it that every unshifted term would underflow (the normaliser must shift by the max)."""
    rules = rules_for(model.tokenizer)
    rng = np.random.default_rng(2)
    for offset in (0.0, 200.0, -200.0):
        logits = (rng.standard_normal(51865) * 4 + offset).astype(np.float32)
        lp = log_softmax(rules.apply(logits.copy(), [5]).astype(np.float64))
        pick = rules.pick(logits.copy(), [5])
        assert np.isfinite(pick.logprobs).all() and np.isfinite(pick.entropy), offset
        np.testing.assert_allclose(pick.logprobs, lp[pick.top], atol=2e-4)
        assert abs(pick.eot_logprob - lp[model.tokenizer.special.eot]) < 2e-4 or lp[model.tokenizer.special.eot] == -np.inf
        p_ = np.exp(lp)
        expect = -np.sum(p_[p_ > 0] * lp[p_ > 0])
        assert abs(pick.entropy - expect) < 1e-3 * max(1.0, expect), (offset, pick.entropy, expect)


def test_sampling_is_seeded_and_follows_the_tempered_softmax(model):
    rules = rules_for(model.tokenizer)
    logits = np.full(51865, -30.0, np.float32)
    logits[[400, 401, 402]] = [2.0, 1.0, 0.0]

    def draws(temperature, seed, n):
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(n):
            pick = rules.pick(logits.copy(), [5])
            tok, lp = rules.sample(pick, temperature, rng)
            out.append(tok)
            assert abs(lp - float(log_softmax(rules.apply(logits.copy(), [5]))[tok])) < 1e-4   # logprob at T=1
        return out

    assert draws(1.0, 7, 50) == draws(1.0, 7, 50)
    assert set(draws(0.05, 3, 20)) == {400}          # a cold temperature is nearly greedy
    got = np.bincount(draws(1.0, 11, 600), minlength=403)[400:403] / 600
    want = np.exp([2.0, 1.0, 0.0]) / np.exp([2.0, 1.0, 0.0]).sum()
    assert np.abs(got - want).max() < 0.07, got
