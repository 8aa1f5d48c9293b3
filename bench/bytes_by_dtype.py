"""bench/absorbed.py's byte counts by dtype: what a decode step moves at steps 1, 32, 100 and 200.

`dtype_report` scales the fp32 step graph's counts to each dtype's bytes an element (DTYPE_BYTES).
`graph_report` counts integer step graphs as written (bench/step_bytes.py on the graph itself: int8 weights with their int32/int64 biases, int16 or int8 inputs, and whatever a recipe left in float),
so a mixed recipe's cost is read from its graph, not assumed. FLOAT32 constants and inputs count 2 B an element
there: a board computes them in fp16 (`ncc-tflite --relax-fp32`); the file stores 4. Per-tensor scales are a few kB.
"""
from __future__ import annotations

from pathlib import Path

from bench.step_bytes import CROSS_INPUTS, SELF_INPUTS, step_bytes
from core.model.dims import ModelDims
from device.graphs.tflite_read import tensors
from device.runner.bundle import read_bundle

# Bytes an element of (weights, cross state and self cache, logits). fp32 relaxed: weights as the .tflite stores
# them, computed in fp16 (a board confirms what ncc-tflite stores); a16w8/a8w8 as int_quantize.py writes them;
# quantized biases and scales left out. mixed is part float: --int-bundles counts its graph as written.
DTYPE_BYTES = {"fp32-relaxed": (4, 2, 2), "fp16": (2, 2, 2), "a16w8": (1, 2, 2), "a8w8": (1, 1, 1)}
STEPS = (1, 32, 100, 200)


def _head(bw: float, what: str) -> None:
    print(f"\n## {what}, MB a step (caches counted once); floor ms/token at {bw:g} GB/s; 'static' = the "
          "448-slot graph, which reads every slot at every step")
    print(f"{'dtype':<13} {'form':<9} {'step':>4} {'weights':>8} {'cross':>6} {'self':>6} {'logits':>6} {'total':>7} "
          f"{'ms/tok':>7} {'static':>7} {'ms':>6}")


def _rows(dtype: str, form: str, weights: float, cross: float, self_all: float, logits: float, bw: float,
          slots: int) -> dict:
    static = weights + cross + self_all + logits
    out = {}
    for s in STEPS:
        self_ = self_all * s / slots
        total = weights + cross + self_ + logits
        out[s] = total
        print(f"{dtype:<13} {form:<9} {s:4d} {weights / 1e6:8.1f} {cross / 1e6:6.2f} {self_ / 1e6:6.2f} "
              f"{logits / 1e6:6.2f} {total / 1e6:7.1f} {total / bw / 1e6:7.2f} {static / 1e6:7.1f} "
              f"{static / bw / 1e6:6.2f}")
    return out


def dtype_report(counted: dict, bandwidths: list[float]) -> dict:
    """The fp32 graph's counts at each dtype's bytes an element (DTYPE_BYTES), the self cache as filled."""
    d, bw = ModelDims(), bandwidths[len(bandwidths) // 2]
    _head(bw, "by dtype")
    return {(dtype, form): _rows(dtype, form, b.weights / 4 * wb, b.cross_once / 4 * ab, b.self_once / 4 * ab,
                                 d.n_vocab * lb, bw, d.n_text_ctx)
            for dtype, (wb, ab, lb) in DTYPE_BYTES.items() for form, b in counted.items()}


def graph_report(bundles: list[Path], counted: dict, bandwidths: list[float]) -> dict:
    """Integer bundles' step graphs counted as written; each total at step 32 against the fp16 step's."""
    d, bw = ModelDims(), bandwidths[len(bandwidths) // 2]
    _head(bw, "integer step graphs as written (--int-bundles)")
    out = {}
    for path in bundles:
        b = read_bundle(path)
        graph = b.graph_path("decoder_step", "tflite").read_bytes()
        g = step_bytes(graph)
        weights = g.weights - g.float_weights / 2
        # Inputs a recipe left in float are fp32 in the file, fp16 on the board (relaxed), like its constants.
        relaxed = {name: 0.5 if t.dtype == "FLOAT32" else 1.0 for name, t in
                   ((t.name, t) for t in tensors(graph)) if name in (*SELF_INPUTS, *CROSS_INPUTS)}
        cross = g.cross_once * min(relaxed.get(n, 1.0) for n in CROSS_INPUTS)
        self_all = g.self_once * relaxed.get("self_k", 1.0)
        rows = _rows(f"{b.manifest['dtype']} (graph)", b.cross, weights, cross, self_all, g.logits, bw, d.n_text_ctx)
        fp16 = counted[b.cross].total("once") - counted[b.cross].self_once / 2 * (1 - 32 / d.n_text_ctx) \
            + d.n_vocab * 2
        out[str(path)] = {"dtype": b.manifest["dtype"], "cross": b.cross, "file_mb": len(graph) / 1e6,
                          "weights": weights, "float_weights_stored": g.float_weights,
                          "total": rows, "vs_fp16_at_32": rows[32] / fp16}
        print(f"{'':<13} {b.cross:<9} step 32 against fp16's: {rows[32] / fp16:.2f}x; file {len(graph) / 1e6:.1f} MB "
              f"({g.float_weights / 1e6:.1f} MB of it FLOAT32 constants)")
    return out
