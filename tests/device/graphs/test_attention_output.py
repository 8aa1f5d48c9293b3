"""The step graph's attention variant: the alignment heads' cross-attention weights, [n_heads,1,1500],
equal in NumPy, ONNX Runtime and LiteRT, absent from the plain step graph, and still MDLA-clean."""
import numpy as np
import onnx
import pytest

from core.model.alignment import BASE_ALIGNMENT_HEADS, alignment_heads, read_alignment_heads
from core.model.kv_cache import KVCache
from core.model.whisper import embed
from device.graphs.onnx_graphs import build_decoder_step
from device.graphs.tflite_graphs import build_decoder_step_tflite
from device.graphs.tflite_read import io, operators
from device.toolchain.check_dla import check_graph
from tests.conftest import AUDIO
from tests.device.graphs.tflite_helpers import run_onnx, run_tflite

TOL = 1e-3


@pytest.fixture(scope="module")
def feeds(weights, reference):
    """The first step of test_en.wav's first window: SOT at position 0 over an empty cache."""
    from core.model.audio import load_audio
    from core.model.mel import mel_windows
    from core.model.tokenizer import WhisperTokenizer

    cross_k, cross_v = reference.encode(mel_windows(load_audio(AUDIO / "test_en.wav"))[:1])
    d = weights.dims
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    sot = WhisperTokenizer.from_weights(weights).special.sot
    return {"x": embed(reference, [sot], 0), "self_k": cache.k, "self_v": cache.v, "cross_k": cross_k,
            "cross_v": cross_v, "mask": cache.mask()}


def test_the_installed_model_lists_whisper_bases_heads(weights):
    assert read_alignment_heads(weights.files[0].parent) == BASE_ALIGNMENT_HEADS
    assert alignment_heads(weights.dims, weights.files) == BASE_ALIGNMENT_HEADS


def test_numpy_reference_attention_rows_are_distributions(reference, feeds):
    logits, new_k, new_v, attn = reference.step_with_attention(*feeds.values())
    assert attn.shape == (len(BASE_ALIGNMENT_HEADS), 1, 1500)
    assert np.allclose(attn.sum(-1), 1.0, atol=1e-5) and attn.min() >= 0
    plain = reference.step(*feeds.values())
    for a, b in zip(plain, (logits, new_k, new_v)):
        assert np.array_equal(a, b)


def test_onnx_plain_has_no_attention_and_the_variant_matches_numpy(weights, reference, feeds, tmp_path):
    plain = build_decoder_step(weights.params, weights.dims)
    assert [o.name for o in plain.graph.output] == ["logits", "new_k", "new_v"]
    variant = build_decoder_step(weights.params, weights.dims, BASE_ALIGNMENT_HEADS)
    assert [o.name for o in variant.graph.output] == ["logits", "new_k", "new_v", "attention"]
    assert {n.op_type for n in variant.graph.node} == {n.op_type for n in plain.graph.node}
    out = run_onnx(variant, feeds)
    ref = reference.step_with_attention(*feeds.values())
    assert out["attention"].shape == (8, 1, 1500)
    assert np.abs(out["attention"] - ref[3]).max() <= TOL
    assert np.abs(out["logits"] - ref[0]).max() <= TOL
    path = tmp_path / "decoder_step_attention.onnx"
    onnx.save(variant, str(path), save_as_external_data=True, location="decoder_step_attention.onnx.data")
    report = check_graph(path)
    assert report.ok, report.violations


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_tflite_variant_matches_numpy_and_passes_check_dla(weights, reference, feeds, tmp_path, dtype):
    plain = build_decoder_step_tflite(weights.params, weights.dims, dtype)
    assert "attention" not in io(plain)["outputs"]
    variant = build_decoder_step_tflite(weights.params, weights.dims, dtype, BASE_ALIGNMENT_HEADS)
    assert io(variant)["outputs"]["attention"] == [8, 1, 1500]
    assert {o.op for o in operators(variant)} == {o.op for o in operators(plain)}
    out = run_tflite(variant, feeds)
    ref = reference.step_with_attention(*feeds.values())
    assert np.allclose(out["attention"].sum(-1), 1.0, atol=1e-3)
    assert np.abs(out["attention"] - ref[3]).max() <= (TOL if dtype == "fp32" else 1e-2)
    path = tmp_path / f"decoder_step_attention_{dtype}.tflite"
    path.write_bytes(variant)
    report = check_graph(path)
    assert report.ok, report.violations
