"""The absorbed cross-attention graphs (`cross="absorbed"`) on the real weights: the encoder outputs F, the
step reads F instead of cross K/V, and both give the kv form's logits within 1e-3 in NumPy, ONNX Runtime
and LiteRT; no op type the kv graphs do not already have, and every graph passes the MDLA 5.3 check."""
import numpy as np
import onnx
import pytest

from core.model.alignment import BASE_ALIGNMENT_HEADS
from core.model.kv_cache import KVCache
from core.model.whisper import NumpyBackend, causal_mask, embed
from device.graphs.onnx_graphs import build_decoder_full, build_decoder_step, build_encoder
from device.graphs.tflite_graphs import build_decoder_step_tflite, build_encoder_tflite
from device.graphs.tflite_read import io, operators
from device.toolchain.check_dla import check_graph
from tests.conftest import AUDIO
from tests.device.graphs.tflite_helpers import BOARD_OPS, run_onnx, run_tflite

TOL = 1e-3


@pytest.fixture(scope="module")
def absorbed(weights):
    return NumpyBackend(weights, cross="absorbed")


@pytest.fixture(scope="module")
def window(weights, reference, absorbed):
    """test_en.wav's first window: its mel, and the step feeds of the position after the SOT prefix (its
    first three tokens in the cache) in both forms: {kv feeds}, {absorbed feeds}."""
    from core.model.audio import load_audio
    from core.model.mel import mel_windows
    from core.model.tokenizer import WhisperTokenizer

    mel = mel_windows(load_audio(AUDIO / "test_en.wav"))[:1]
    cross_k, cross_v = reference.encode(mel)
    feats, none = absorbed.encode(mel)
    assert none is None and feats.shape == (1, 1, 1500, 512)
    d = weights.dims
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    tokens = WhisperTokenizer.from_weights(weights).sot_sequence("en")
    for t, tok in enumerate(tokens[:-1]):
        _, k, v = reference.step(embed(reference, [tok], t), cache.k, cache.v, cross_k, cross_v, cache.mask())
        cache.write(k, v)
    common = {"x": embed(reference, tokens[-1:], len(tokens) - 1), "self_k": cache.k.copy(),
              "self_v": cache.v.copy(), "mask": cache.mask()}
    return mel, common | {"cross_k": cross_k, "cross_v": cross_v}, common | {"F": feats}


def _args(feeds: dict) -> tuple:
    """A feeds dict as the Backend.step arguments (absorbed: F, None)."""
    cross = (feeds["cross_k"], feeds["cross_v"]) if "cross_k" in feeds else (feeds["F"], None)
    return feeds["x"], feeds["self_k"], feeds["self_v"], *cross, feeds["mask"]


def test_numpy_absorbed_form_gives_the_kv_forms_logits(reference, absorbed, window):
    _, kv, ab = window
    want, got = reference.step_with_attention(*_args(kv)), absorbed.step_with_attention(*_args(ab))
    assert np.abs(got[0] - want[0]).max() <= TOL
    assert np.abs(got[1] - want[1]).max() <= TOL and np.abs(got[2] - want[2]).max() <= TOL
    assert np.abs(got[3] - want[3]).max() <= TOL      # the alignment heads' weights too
    # The uncached reference over the same prefix agrees as well.
    x = np.concatenate([embed(reference, [0], 0)] * 2, axis=1)
    mask = causal_mask(2)[None, None]
    full_kv = reference.full(x, kv["cross_k"], kv["cross_v"], mask)
    assert np.abs(absorbed.full(x, ab["F"], None, mask) - full_kv).max() <= TOL


def test_onnx_absorbed_encoder_outputs_f_and_the_step_matches(weights, reference, window, tmp_path):
    mel, kv, ab = window
    p, d = weights.params, weights.dims
    encoder = build_encoder(p, d, "absorbed")
    assert [o.name for o in encoder.graph.output] == ["F"]
    feats = run_onnx(encoder, {"mel": mel.reshape(1, 80, 3000).astype(np.float32)})["F"]
    assert np.abs(feats - ab["F"]).max() <= TOL

    step, plain = build_decoder_step(p, d, cross="absorbed"), build_decoder_step(p, d)
    assert [i.name for i in step.graph.input] == ["x", "self_k", "self_v", "F", "mask"]
    assert [o.name for o in step.graph.output] == ["logits", "new_k", "new_v"]
    assert {n.op_type for n in step.graph.node} <= {n.op_type for n in plain.graph.node}
    want = reference.step(*_args(kv))
    out = run_onnx(step, ab)
    assert np.abs(out["logits"] - want[0]).max() <= TOL
    assert np.abs(out["new_k"] - want[1]).max() <= TOL

    variant = build_decoder_step(p, d, BASE_ALIGNMENT_HEADS, "absorbed")
    got = run_onnx(variant, ab)["attention"]
    assert got.shape == (len(BASE_ALIGNMENT_HEADS), 1, 1500)
    assert np.abs(got - reference.step_with_attention(*_args(kv))[3]).max() <= TOL

    for name, model in (("encoder", encoder), ("decoder_step", step), ("decoder_step_attention", variant)):
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, str(path), save_as_external_data=True, location=f"{name}.onnx.data")
        report = check_graph(path)
        assert report.ok, report.violations


def test_onnx_uncached_absorbed_graph_matches_the_kv_one(weights, window):
    _, kv, ab = window
    p, d = weights.params, weights.dims
    x = np.concatenate([kv["x"]] * 3, axis=1)
    mask = causal_mask(3)[None, None]
    want = run_onnx(build_decoder_full(p, d), {"x": x, "mask": mask, "cross_k": kv["cross_k"],
                                                "cross_v": kv["cross_v"]})["logits"]
    got = run_onnx(build_decoder_full(p, d, "absorbed"), {"x": x, "mask": mask, "F": ab["F"]})["logits"]
    assert np.abs(got - want).max() <= TOL


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_tflite_absorbed_graphs_match_and_pass_check_dla(weights, reference, window, tmp_path, dtype):
    _, kv, ab = window
    p, d = weights.params, weights.dims
    encoder = build_encoder_tflite(p, d, dtype, "absorbed")
    assert io(encoder)["outputs"] == {"F": [1, 1, 1500, 512]}
    step = build_decoder_step_tflite(p, d, dtype, cross="absorbed")
    assert list(io(step)["inputs"]) == ["x", "self_k", "self_v", "F", "mask"]
    ops = {o.op for o in operators(step)}
    assert ops <= {o.op for o in operators(build_decoder_step_tflite(p, d, dtype))} and ops <= BOARD_OPS
    assert "BATCH_MATMUL" in ops and "FULLY_CONNECTED" in ops and "GATHER" not in ops
    out = run_tflite(step, ab)
    want = reference.step(*_args(kv))
    assert np.abs(out["logits"] - want[0]).max() <= (TOL if dtype == "fp32" else 0.25)
    if dtype == "fp32":
        assert int(out["logits"].argmax()) == int(want[0].argmax())
    variant = build_decoder_step_tflite(p, d, dtype, BASE_ALIGNMENT_HEADS, "absorbed")
    assert io(variant)["outputs"]["attention"] == [len(BASE_ALIGNMENT_HEADS), 1, 1500]
    for name, model in (("encoder", encoder), ("decoder_step", step), ("decoder_step_attention", variant)):
        path = tmp_path / f"{name}_{dtype}.tflite"
        path.write_bytes(model)
        report = check_graph(path)
        assert report.ok, report.violations
