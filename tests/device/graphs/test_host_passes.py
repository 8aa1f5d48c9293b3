"""The host-only passes: every decomposed LayerNorm becomes one node, the encoder's attention runs head by
head (and its queries and MLP rows in blocks), its cross K/V come out per layer and head-major, the decoder
reads them and its cache head-major, and the step takes a cache of any length, with the same outputs."""
import numpy as np
import onnxruntime as ort

from core.model.kv_cache import to_head_major
from device.graphs import onnx_graphs as G
from device.graphs.encoder_passes import attention_by_head, cross_by_layer, mlp_by_rows
from device.graphs.host_passes import fuse_layer_norms, growing_cache, head_major_kv, layer_norm_count
from device.graphs.quantize import quantize_model


def run(model, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_each_layer_norm_of_the_step_becomes_one_node_with_the_same_outputs(model):
    dims = model.weights.dims
    step = G.per_layer_inputs(G.build_decoder_step(model.weights.params, dims))
    fused = fuse_layer_norms(step)
    assert layer_norm_count(step) == 0
    assert layer_norm_count(fused) == 3 * dims.n_text_layer + 1          # three per block, and the final one
    assert len(fused.graph.node) == len(step.graph.node) - 8 * layer_norm_count(fused)
    assert not any(n.op_type in ("ReduceMean", "Sqrt") for n in fused.graph.node)

    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
             for i in step.graph.input}
    for a, b in zip(run(step, feeds), run(fused, feeds)):
        np.testing.assert_allclose(a, b, atol=1e-4)


def test_a_graph_without_the_pattern_is_left_alone(model):
    dims = model.weights.dims
    step = G.per_layer_inputs(G.build_decoder_step(model.weights.params, dims))
    once = fuse_layer_norms(step)
    assert fuse_layer_norms(once).SerializeToString() == once.SerializeToString()


def test_the_encoders_attention_runs_head_by_head_with_identical_outputs(model, clip_mels):
    dims = model.weights.dims
    encoder = G.build_encoder(model.weights.params, dims)
    split = attention_by_head(encoder, dims.n_audio_head)
    ops = [n.op_type for n in split.graph.node]
    assert ops.count("Softmax") == dims.n_audio_layer * dims.n_audio_head
    assert ops.count("Concat") - [n.op_type for n in encoder.graph.node].count("Concat") == dims.n_audio_layer
    feeds = {"mel": clip_mels("test_en.wav")[0].reshape(1, dims.n_mels, -1)}
    for a, b in zip(run(encoder, feeds), run(split, feeds)):
        assert np.array_equal(a, b)              # each head's MatMul and Softmax are the batched ones' slice


def test_masked_attention_is_not_split(model):
    """The decoder's self-attention adds a mask to its scores: left as it is."""
    step = G.build_decoder_step(model.weights.params, model.weights.dims)

    def masked(graph):
        made = {n.output[0]: n.op_type for n in graph.graph.node}
        return sum(n.op_type == "Softmax" and made.get(n.input[0]) == "Add" for n in graph.graph.node)

    assert masked(step) == model.weights.dims.n_text_layer
    assert masked(attention_by_head(step, model.weights.dims.n_text_head)) == masked(step)


def test_the_encoder_over_row_blocks_with_cross_kv_per_layer_gives_identical_outputs(model, clip_mels):
    """The default backend's encoder (int8b) with every memory pass: queries and MLP rows in 4 blocks, the
    cross K/V as per-layer outputs, which stacked are the original outputs to the bit."""
    dims = model.weights.dims
    encoder = fuse_layer_norms(quantize_model(G.build_encoder(model.weights.params, dims), "int8b"))
    plain = attention_by_head(encoder, dims.n_audio_head)
    blocked = cross_by_layer(mlp_by_rows(attention_by_head(encoder, dims.n_audio_head, 4), 4))
    ops = [n.op_type for n in blocked.graph.node]
    assert ops.count("Softmax") == dims.n_audio_layer * dims.n_audio_head * 4
    assert ops.count("Gelu") == 2 + dims.n_audio_layer * 4        # the two convolutions' own, and the MLPs'
    assert [o.name for o in blocked.graph.output] == [f"cross_{kv}.{i}" for kv in "kv" for i in range(dims.n_text_layer)]
    for clip in ("test_en.wav", "test_zh.wav"):
        feeds = {"mel": clip_mels(clip)[0].reshape(1, dims.n_mels, -1)}
        k, v = run(plain, feeds)
        per_layer = run(blocked, feeds)
        assert np.array_equal(k[:, 0], np.stack(per_layer[:dims.n_text_layer]))
        assert np.array_equal(v[:, 0], np.stack(per_layer[dims.n_text_layer:]))


def test_an_encoder_without_the_cross_tail_is_left_alone(model):
    """The absorbed form outputs F: nothing to split per layer."""
    encoder = G.build_encoder(model.weights.params, model.weights.dims, cross="absorbed")
    assert cross_by_layer(encoder).SerializeToString() == encoder.SerializeToString()


def test_the_encoder_writes_each_layers_cross_kv_head_major(model, clip_mels):
    dims = model.weights.dims
    per_layer = cross_by_layer(quantize_model(G.build_encoder(model.weights.params, dims), "int8b"))
    major = head_major_kv(per_layer, dims.n_text_head)
    shapes = {o.name: [x.dim_value for x in o.type.tensor_type.shape.dim] for o in major.graph.output}
    assert shapes == {f"cross_{kv}.{i}": [8, 1500, 64] for kv in "kv" for i in range(dims.n_text_layer)}
    feeds = {"mel": clip_mels("test_en.wav")[0].reshape(1, dims.n_mels, -1)}
    for rows, heads in zip(run(per_layer, feeds), run(major, feeds)):
        assert np.array_equal(to_head_major(rows[None, None], dims.n_text_head)[0], heads)


def test_the_decoder_step_reads_head_major_kv_with_the_same_outputs(model):
    """Cross K/V and the cache: the key paths end in a Transpose ONNX Runtime folds into the MatMul, the value
    paths in none; the outputs match the stacked form's (to the bit on the machines measured; a GEMM may sum
    in another order elsewhere)."""
    dims = model.weights.dims
    step = fuse_layer_norms(G.per_layer_inputs(quantize_model(G.build_decoder_step(model.weights.params, dims), "int8b")))
    major = head_major_kv(step, dims.n_text_head)
    kv = {i.name: [x.dim_value for x in i.type.tensor_type.shape.dim] for i in major.graph.input if i.name[:5] in ("cross", "self_")}
    assert len(kv) == 4 * dims.n_text_layer
    assert all(shape == [1, 8, 1500 if name.startswith("cross") else 448, 64] for name, shape in kv.items())
    assert len(major.graph.node) == len(step.graph.node) - 3 * 2 * dims.n_text_layer   # 3 fewer nodes per K/V pair

    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
             for i in step.graph.input}
    feeds["mask"][..., 10:-1] = -1e9
    moved = {k: np.ascontiguousarray(to_head_major(v, dims.n_text_head)) if k in kv else v for k, v in feeds.items()}
    for a, b in zip(run(step, feeds), run(major, moved)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_graphs_without_per_layer_cross_kv_are_left_alone(model):
    """Stacked inputs (before per_layer_inputs) and the absorbed form have nothing to move."""
    dims = model.weights.dims
    for graph in (G.build_decoder_step(model.weights.params, dims),
                  G.build_encoder(model.weights.params, dims, cross="absorbed")):
        assert head_major_kv(graph, dims.n_text_head).SerializeToString() == graph.SerializeToString()


def test_a_growing_cache_step_over_the_filled_slots_gives_the_448_slot_outputs(model):
    """The step with 128 slots (100 filled) and a mask of 129 against the same step over all 448."""
    dims = model.weights.dims
    step = head_major_kv(fuse_layer_norms(G.per_layer_inputs(
        quantize_model(G.build_decoder_step(model.weights.params, dims), "int8b"))), dims.n_text_head)
    grows = growing_cache(step)
    assert [d.dim_param for d in grows.graph.input[1].type.tensor_type.shape.dim][3] == "cache_slots_and_token"
    assert not any(n.op_type == "Split" and len(n.output) == 2 for n in grows.graph.node)
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
             for i in step.graph.input}
    feeds["mask"][...] = -1e9
    feeds["mask"][..., :100] = feeds["mask"][..., -1] = 0
    fewer = {k: v[:, :, :128] if k.startswith("self_") else v for k, v in feeds.items()}
    fewer["mask"] = np.concatenate([feeds["mask"][..., :128], feeds["mask"][..., -1:]], axis=-1)
    for a, b in zip(run(step, feeds), run(grows, fewer)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    for a, b in zip(run(step, feeds), run(grows, feeds)):         # and over all 448, as the board's cache
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_a_step_whose_cache_is_not_head_major_keeps_its_448_slots(model):
    dims = model.weights.dims
    step = fuse_layer_norms(G.per_layer_inputs(G.build_decoder_step(model.weights.params, dims)))
    assert growing_cache(step).SerializeToString() == step.SerializeToString()
