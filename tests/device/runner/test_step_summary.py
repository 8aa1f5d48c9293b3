"""The step graph's summary of the logits (device/graphs/host_passes.py, summarise_logits) against the NumPy
path of LogitRules.pick on real onnx-int8b logits: the same tokens and top-k ids, the reported values within
float rounding, and each closer than 1e-4 to a float64 reference."""
import numpy as np
import pytest

from core.decode.decoding import LogitRules, decode_windows
from core.decode.options import DecodeOptions
from core.model.encoder_cache import EncoderCache
from device.runner.backends import make_backend


@pytest.fixture(scope="module")
def int8b(model):
    return make_backend("onnx-int8b", model.weights)


@pytest.fixture(scope="module")
def int8b_cross():
    """int8b's own cross K/V (the session-wide cache holds the reference's, keyed by the mel alone)."""
    return EncoderCache(max_bytes=1 << 28)


class NoSummary:
    """The same backend without its summary: LogitRules.pick takes the NumPy path every step."""

    def __init__(self, backend):
        self.inner, self.summarises = backend, False

    def __getattr__(self, name):
        return getattr(self.inner, name)


def exact(logits: np.ndarray, rules: LogitRules, sampled: list[int]):
    """(logprobs over the vocabulary, entropy) in float64 after the rules."""
    x = rules.apply(logits, sampled).astype(np.float64)
    lp = x - np.logaddexp.reduce(x)
    seen = np.isfinite(lp)
    return lp, float(-(np.exp(lp[seen]) * lp[seen]).sum())


@pytest.mark.parametrize("options", [DecodeOptions(language="en"),
                                     DecodeOptions(language="en", suppress_eot=True, max_tokens=40)],
                         ids=["default", "eot-suppressed"])
def test_the_summary_matches_the_numpy_pick_on_real_logits(model, int8b, clip_mels, int8b_cross, monkeypatch,
                                                            options):
    seen = []
    inner = int8b.step_summary

    def record(*args):
        out = inner(*args)
        seen.append((out[0].reshape(-1).copy(), out[3]))
        return out

    monkeypatch.setattr(int8b, "step_summary", record)
    list(decode_windows(int8b, model.tokenizer, clip_mels("test_en.wav"), options, encoder_cache=int8b_cross))
    assert len(seen) > 10                        # every step after the first ran through the summary
    rules = LogitRules(model.tokenizer, options, model.backend.dims.n_vocab)
    for logits, summary in seen:
        numpy_pick = rules.pick(logits, [1])
        lp, entropy = exact(logits, rules, [1])
        assert summary.top.tolist() == numpy_pick.top.tolist()
        np.testing.assert_allclose(summary.top_logprobs, lp[summary.top], atol=1e-4)
        np.testing.assert_allclose(summary.top_logprobs, numpy_pick.logprobs, atol=1e-4)
        assert abs(summary.entropy - entropy) < 1e-4
        # The NumPy path's entropy sums e * logits in a float32 dot; its error (up to ~3e-4 nats here) is the
        # larger one: the summary moves it towards the float64 value, never away by more than rounding.
        assert abs(summary.entropy - numpy_pick.entropy) <= abs(numpy_pick.entropy - entropy) + 1e-4


def test_decoding_through_the_summary_gives_the_numpy_paths_tokens_and_values(model, int8b, clip_mels,
                                                                              int8b_cross):
    options = DecodeOptions(language="en")
    mels = clip_mels("test_en.wav")
    graph = [e for e in decode_windows(int8b, model.tokenizer, mels, options, encoder_cache=int8b_cross)
             if e.type == "token"]
    numpy = [e for e in decode_windows(NoSummary(int8b), model.tokenizer, mels, options,
                                       encoder_cache=int8b_cross) if e.type == "token"]
    assert [e.token for e in graph] == [e.token for e in numpy] and len(graph) > 10
    for a, b in zip(graph, numpy):
        assert [t for t, _ in a.top] == [t for t, _ in b.top]
        assert abs(a.logprob - b.logprob) < 1e-4 and abs(a.eot_prob - b.eot_prob) < 1e-4
        np.testing.assert_allclose([p for _, p in a.top], [p for _, p in b.top], atol=1e-4)
        assert abs(a.entropy - b.entropy) < 5e-4


def test_the_summary_leaves_the_logits_and_cache_as_step_gives_them(model, int8b, clip_mels, int8b_cross):
    d = int8b.dims
    cross_k, cross_v = int8b.encode(clip_mels("test_en.wav")[0][None])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 1, d.n_text_state)).astype(np.float32)
    self_kv = np.zeros((d.n_text_layer, 1, d.n_text_ctx, d.n_text_state), np.float32)
    mask = np.full((1, 1, 1, d.n_text_ctx + 1), -1e9, np.float32)
    mask[..., -1] = 0
    args = (x, self_kv, self_kv, cross_k, cross_v, mask)
    bias = np.zeros(d.n_vocab, np.float32)
    plain, summarised = int8b.step(*args), int8b.step_summary(*args, bias, np.array([3], np.int64))
    for a, b in zip(plain, summarised[:3]):
        assert np.array_equal(a, b)
    assert summarised[3].top.tolist() == np.argsort(-plain[0].reshape(-1), kind="stable")[:3].tolist()
