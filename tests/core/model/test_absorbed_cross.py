"""The absorbed cross-attention algebra on random weights: attending to F through the folded key and value
projections equals attending to F's per-layer K/V, value bias included (each head's weights sum to 1)."""
import numpy as np
import pytest

from core.errors import ModelError
from core.model.backend import check_cross, cross_bytes
from core.model.layers import AbsorbedCross, DecoderBlock, KVCross, absorbed_weights

D, H, A, T = 32, 4, 30, 5
NAME = "decoder.blocks.0.cross_attn"


def _cross_params(rng, value_bias: bool = True) -> dict:
    p = {}
    for part in ("query", "key", "value", "out"):
        p[f"{NAME}.{part}.weight"] = (rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32)
    p[f"{NAME}.query.bias"] = rng.standard_normal(D).astype(np.float32)
    p[f"{NAME}.out.bias"] = rng.standard_normal(D).astype(np.float32)
    if value_bias:   # large, so that dropping or misplacing it shows
        p[f"{NAME}.value.bias"] = 3 * rng.standard_normal(D).astype(np.float32)
    return p


def _block_params(rng) -> dict:
    p = {k.replace("cross_attn", "attn"): v for k, v in _cross_params(rng).items()} | _cross_params(rng)
    for ln in ("attn_ln", "cross_attn_ln", "mlp_ln"):
        p[f"decoder.blocks.0.{ln}.weight"] = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
        p[f"decoder.blocks.0.{ln}.bias"] = (0.1 * rng.standard_normal(D)).astype(np.float32)
    for name, shape in (("mlp.0", (4 * D, D)), ("mlp.2", (D, 4 * D))):
        p[f"decoder.blocks.0.{name}.weight"] = (rng.standard_normal(shape) / np.sqrt(shape[1])).astype(np.float32)
        p[f"decoder.blocks.0.{name}.bias"] = rng.standard_normal(shape[0]).astype(np.float32)
    return p


@pytest.fixture
def rng():
    return np.random.default_rng(15)


def test_folded_weights_are_the_per_head_projections(rng):
    p = _cross_params(rng)
    wk, wv = absorbed_weights(p, NAME, H)
    dh = D // H
    assert wk.shape == (H, dh, D) and wv.shape == (H, D, dh) and wk.dtype == wv.dtype == np.float32
    for h in range(H):
        rows = slice(h * dh, (h + 1) * dh)
        assert np.array_equal(wk[h], p[f"{NAME}.key.weight"][rows] * np.float32(dh ** -0.5))
        assert np.array_equal(wv[h], p[f"{NAME}.value.weight"][rows].T)
    # Read back from a graph, the folded weights are used as they are.
    again = absorbed_weights({f"{NAME}.key.absorbed": wk + 1, f"{NAME}.value.absorbed": wv}, NAME, H)
    assert np.array_equal(again[0], wk + 1)


def test_absorbed_equals_kv_on_random_weights_with_the_value_bias(rng):
    p = _cross_params(rng)
    feats = rng.standard_normal((A, D)).astype(np.float32)
    h = rng.standard_normal((T, D)).astype(np.float32)
    kv, absorbed = KVCross.from_params(p, NAME, H), AbsorbedCross.from_params(p, NAME, H)
    cross_k, cross_v = kv.attn.key(feats), kv.attn.value(feats)

    probs_kv, probs_abs = kv.weights(h, cross_k), absorbed.weights(h, feats)
    assert probs_abs.shape == (H, T, A)
    assert np.allclose(probs_abs.sum(-1), 1, atol=1e-6)
    assert np.abs(probs_abs - probs_kv).max() < 1e-5
    out_kv, out_abs = kv.context(probs_kv, cross_k, cross_v), absorbed.context(probs_abs, feats)
    assert out_abs.shape == (T, D)
    assert np.abs(out_abs - out_kv).max() < 1e-4

    # The bias is what makes the value side exact: without it the two differ by b_v·W_o.
    no_bias = AbsorbedCross(absorbed.query, absorbed.wk, absorbed.wv, None, absorbed.out)
    assert np.abs(no_bias.context(probs_abs, feats) - out_kv).max() > 0.1


def test_a_key_bias_changes_nothing_in_either_form(rng):
    """A key bias adds q_h·b_k,h to all of a head's scores alike; softmax ignores it, so the absorbed form
    (which has no place for it) still equals the kv form that applies it."""
    p = _cross_params(rng) | {f"{NAME}.key.bias": 5 * rng.standard_normal(D).astype(np.float32)}
    feats = rng.standard_normal((A, D)).astype(np.float32)
    h = rng.standard_normal((1, D)).astype(np.float32)
    kv, absorbed = KVCross.from_params(p, NAME, H), AbsorbedCross.from_params(p, NAME, H)
    assert np.abs(kv.weights(h, kv.attn.key(feats)) - absorbed.weights(h, feats)).max() < 1e-5


def test_decoder_block_steps_and_full_passes_agree_across_forms(rng):
    p = _block_params(rng)
    kv = DecoderBlock.from_params(p, "decoder.blocks.0", H)
    absorbed = DecoderBlock.from_params(p, "decoder.blocks.0", H, cross="absorbed")
    feats = rng.standard_normal((A, D)).astype(np.float32)
    cross_k, cross_v = kv.cross.attn.key(feats), kv.cross.attn.value(feats)
    x = rng.standard_normal((1, D)).astype(np.float32)
    cache = rng.standard_normal((2, 8, D)).astype(np.float32)
    mask = np.zeros((1, 9), np.float32)
    mask[0, 3:8] = -1e9
    a = kv.step(x, cache[0], cache[1], cross_k, cross_v, mask)
    b = absorbed.step(x, cache[0], cache[1], feats, None, mask)
    for got, want in zip(b, a):
        assert got.shape == want.shape and np.abs(got - want).max() < 1e-4
    xs = rng.standard_normal((T, D)).astype(np.float32)
    causal = np.triu(np.full((T, T), -1e9, np.float32), 1)
    assert np.abs(absorbed(xs, feats, None, causal) - kv(xs, cross_k, cross_v, causal)).max() < 1e-4


def test_cross_state_bytes_and_forms():
    assert cross_bytes(np.zeros((6, 1, 1500, 512), np.float32), np.zeros((6, 1, 1500, 512), np.float32)) == 36_864_000
    assert cross_bytes(np.zeros((1, 1, 1500, 512), np.float32), None) == 3_072_000
    assert check_cross("absorbed") == "absorbed"
    with pytest.raises(ModelError, match="unknown cross-attention form 'mla' — use one of: kv, absorbed"):
        check_cross("mla")
