"""The neutral graph description: inferred shapes, and both emitters computing its NumPy semantics."""
import math

import numpy as np
import pytest

from device.graphs.ir import Graph
from device.graphs.onnx_graphs import to_onnx
from device.graphs.tflite_graphs import to_tflite
from device.graphs.tflite_read import operators, params_from_tflite, tensors
from tests.device.graphs.tflite_helpers import BOARD_OPS, run_onnx, run_tflite

C, T, OUT = 8, 12, 16
_erf = np.vectorize(math.erf)


def _params(rng) -> dict[str, np.ndarray]:
    f = np.float32
    return {"conv.weight": rng.standard_normal((OUT, C, 3)).astype(f), "conv.bias": rng.standard_normal(OUT).astype(f),
            "ln.weight": rng.standard_normal(OUT).astype(f), "ln.bias": rng.standard_normal(OUT).astype(f),
            "fc.weight": rng.standard_normal((OUT, OUT)).astype(f) / 4, "fc.bias": rng.standard_normal(OUT).astype(f)}


def tiny(p: dict) -> Graph:
    """Every op of the description once: conv1d (pad, stride), layer_norm, linear, gelu, heads, softmax,
    an uneven and an even split, slice, concat and the four binary ops."""
    g = Graph("tiny")
    rows = g.transpose(g.reshape(g.input("x", [1, C, T]), [C, T]), [1, 0])                 # [T, C]
    c = g.conv1d(rows, g.const("conv.weight", p["conv.weight"]), g.const("conv.bias", p["conv.bias"]), 2, 1)
    h = g.layer_norm(c, g.const("ln.weight", p["ln.weight"]), g.const("ln.bias", p["ln.bias"]))
    h = g.gelu(g.linear(h, g.const("fc.weight", p["fc.weight"]), g.const("fc.bias", p["fc.bias"])))  # [6, 16]
    q = g.transpose(g.reshape(h, [-1, 2, OUT // 2]), [1, 0, 2])                             # [2, 6, 8]
    kt = g.transpose(g.reshape(h, [-1, 2, OUT // 2]), [1, 2, 0])                            # [2, 8, 6]
    s = g.softmax(g.add(g.matmul(q, kt), g.input("mask", [1, 1, 6])))                       # [2, 6, 6]
    left, right = g.split(s, [5, 1], axis=-1)
    top, bottom = g.split(s, [3, 3], axis=1)
    g.output(g.concat([g.mul(left, g.scalar(0.5)), g.sub(right, g.div(right, g.scalar(2.0)))], axis=-1), "y")
    g.output(g.add(top, bottom), "halves")
    g.output(g.slice(h, 0, -1), "last")
    return g


def numpy_tiny(p: dict, x: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    xp = np.pad(x.reshape(C, T), ((0, 0), (1, 1)))
    cols = np.stack([xp[:, k:k + 2 * 5 + 1:2] for k in range(3)], axis=1)                   # [C, 3, 6]
    c = (p["conv.weight"].reshape(OUT, -1) @ cols.reshape(-1, 6) + p["conv.bias"][:, None]).T
    mu = c.mean(-1, keepdims=True)
    h = (c - mu) / np.sqrt(((c - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * p["ln.weight"] + p["ln.bias"]
    h = h @ p["fc.weight"].T + p["fc.bias"]
    h = 0.5 * h * (1 + _erf(h / math.sqrt(2)))
    q = h.reshape(6, 2, 8).transpose(1, 0, 2)
    s = q @ q.transpose(0, 2, 1) + mask
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    y = np.concatenate([s[..., :5] * 0.5, s[..., 5:] - s[..., 5:] / 2], axis=-1)
    return {"y": y, "halves": s[:, :3] + s[:, 3:], "last": h[-1:]}


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(0)
    p = _params(rng)
    feeds = {"x": rng.standard_normal((1, C, T)).astype(np.float32),
             "mask": np.where(np.arange(6) < 4, 0, -1e9).astype(np.float32).reshape(1, 1, 6)}
    return p, tiny(p), feeds, numpy_tiny(p, feeds["x"], feeds["mask"])


def test_shapes_are_inferred_for_every_value(case):
    _, g, _, want = case
    assert {name: g.shapes[v] for name, v in g.outputs.items()} == {k: v.shape for k, v in want.items()}
    assert g.shapes[g.nodes[2].outputs[0]] == (6, OUT)                    # the padded, strided conv


def test_dynamic_dims_stay_unknown_and_only_onnx_takes_them():
    g = Graph("dyn")
    x = g.reshape(g.input("x", [1, "T", 4]), [-1, 4])
    g.output(g.slice(g.squeeze(g.input("m", [1, "T", 4]), 0), 0, -1), "last_m")
    g.output(g.slice(x, 0, -1), "last")
    assert g.shapes[x] == (None, 4) and g.shapes[g.outputs["last"]] == (1, 4)
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(1, 3, 4), "m": np.ones((1, 3, 4), np.float32)}
    assert np.array_equal(run_onnx(to_onnx(g), feeds)["last"], [[8, 9, 10, 11]])
    with pytest.raises(ValueError, match="dynamic shape"):
        to_tflite(g)


@pytest.mark.parametrize("fmt", ["onnx", "tflite", "tflite-fp16"])
def test_emitters_compute_the_description(case, fmt):
    p, g, feeds, want = case
    if fmt == "onnx":
        got = run_onnx(to_onnx(g), feeds)
    else:
        got = run_tflite(to_tflite(g, "fp16" if fmt.endswith("fp16") else "fp32"), feeds)
    tol = 1e-2 if fmt.endswith("fp16") else 1e-5       # random fp32 weights lose bits in fp16
    for name, arr in want.items():
        assert got[name].shape == arr.shape, name
        assert float(np.abs(got[name] - arr).max()) <= tol, (fmt, name)


def test_tflite_uses_board_ops_names_io_and_reads_weights_back(case):
    p, g, _, _ = case
    model = to_tflite(g)
    ops = {o.op for o in operators(model)}
    assert ops <= BOARD_OPS and {"CONV_2D", "SLICE", "SPLIT", "RSQRT", "GELU", "BATCH_MATMUL"} <= ops
    assert {"y", "halves", "last", "x", "mask"} <= {t.name for t in tensors(model)}
    back = params_from_tflite(model)
    assert np.array_equal(back["conv.weight"][:, :, 0], p["conv.weight"])    # ONNX Conv layout [out,in,1,k]
    assert all(np.array_equal(back[k], p[k]) for k in p if k != "conv.weight")
    half = to_tflite(g, "fp16")
    assert "DEQUANTIZE" in {o.op for o in operators(half)}
    assert {t.name for t in tensors(half) if t.dtype == "FLOAT16"} == set(p)
