"""onnx-int8b, the block-wise int8 backend: every weight MatMul block-quantised, logits near the
reference's, and the uncached graph and the attention variant run the same quantised numbers as the step."""
import numpy as np
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from device.graphs import onnx_graphs as G
from device.graphs.quantize import quantize_model
from device.runner.backends import make_backend
from tests.device.runner.compare_helpers import Compare, three_ways


@pytest.fixture(scope="module")
def int8b(model):
    return make_backend("onnx-int8b", model.weights)


def test_every_weight_matmul_is_block_quantised(model):
    graph = quantize_model(G.build_decoder_step(model.weights.params, model.weights.dims), "int8b")
    ops = [n.op_type for n in graph.graph.node]
    inits = {t.name: t for t in graph.graph.initializer}
    # per layer: self q, k, v, out; cross q, out (cross K/V come from the encoder graph); 2 MLP; then the LM head
    assert ops.count("MatMulNBits") == 6 * 8 + 1
    assert not any(t.data_type == 1 and t.dims and np.prod(t.dims) >= 512 * 512 for t in inits.values()
                   if not t.name.endswith("_scales")), "an fp32 weight matrix is left"
    attrs = [{a.name: a.i for a in n.attribute} for n in graph.graph.node if n.op_type == "MatMulNBits"]
    assert all(a["bits"] == 8 and a["block_size"] == 16 for a in attrs)
    assert [a["N"] for a in attrs].count(model.weights.dims.n_vocab) == 1          # the LM head


def test_logits_follow_the_reference_closely(model, int8b, clip_mels, encoder_cache):
    both = Compare(model.backend, int8b)
    list(decode_windows(both, model.tokenizer, clip_mels("test_en.wav"), DecodeOptions(), encoder_cache=encoder_cache))
    # largest logit error per step; onnx-int8 (one scale per tensor) gives a median 1.4 and a max 2.0 here, a
    # wrong block layout gives garbage, and an unquantised graph 1e-4
    diffs = both.step_diffs
    assert len(diffs) > 5 and 0.01 < np.median(diffs) < 0.7 and max(diffs) < 1.5, diffs


def test_uncached_and_attention_graphs_give_the_step_graphs_tokens(model, int8b, clip_mels):
    cached, uncached, attention = three_ways(int8b, model.tokenizer, clip_mels("test_zh.wav"))
    assert uncached == cached == attention and len(cached) > 5
