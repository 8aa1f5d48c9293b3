"""Where a cached step's time goes against the memory it must read, and what 10x the uncached reference needs.

    python bench/step_floor.py [--dtype int8b|fp32] [--filled 100] [--rounds 12] [--no-spin]

The host step graph as the runner runs it (head-major K/V, the cache of any length), on random feeds with
--filled cache slots in use, timed four ways, in rounds that alternate blocks of back-to-back calls a decode's
0.2 ms of Python apart (alternating single calls of four sessions wakes four thread pools, ~30 % slower):
- the step as it is (a step reads ~3x the last-level cache, so its own reads leave nothing of it cached);
- the same step with the cross K/V cut to 16 encoder positions: the difference is what reading them costs;
- the LM head alone (the step's own [512, vocab] MatMul node and weights), the cache overwritten before each
  call, as the rest of a step overwrites it;
- the uncached reference over --filled + 4 tokens (the graph `--no-cache` decoding runs at every token);
- with int8b, also the native-int8b step (device/runner/native/native_step.c) on the same weights and feeds, the cross
  K/V in int8 as it keeps them.
Also the bytes a step reads (its weights, the cross K/V, the filled cache) and the memory's read speed with two
threads, so the floor bytes / speed sits beside the measured step. Sessions as a one-shot `whisperkv transcribe`
runs them (workers spin within a run; --no-spin: as the studio runs them). Never asserts a time.
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.model.weights import load_model  # noqa: E402
from device.graphs import onnx_graphs as G  # noqa: E402
from device.graphs.host_passes import host_decoder  # noqa: E402
from device.graphs.quantize import quantize_model  # noqa: E402
from device.runner.native.library import supported as native_supported  # noqa: E402
from device.runner.onnx.ort_session import open_session as _session  # noqa: E402
from device.spec.runtime_config import RuntimeConfig  # noqa: E402

CUT_POSITIONS = 16
LLC_BYTES = 64 << 20       # over twice this machine's L3
BLOCK = 6                  # back-to-back calls of one graph, the first not counted
PYTHON_GAP_S = 2e-4        # the decode loop's Python between two steps (bench/step_profile.py)


def read_speed(mb: int = 256, threads: int = 2, rounds: int = 10) -> float:
    """GB/s of NumPy integer sums over `mb` MB split across `threads` threads (NumPy releases the GIL in the sum)."""
    # int64: its sum is bound by memory, where a float sum is bound by its pairwise adds
    parts = [np.ones((mb << 20) // threads // 8, np.int64) for _ in range(threads)]
    best = 0.0
    for _ in range(rounds):
        workers = [threading.Thread(target=np.sum, args=(p,)) for p in parts]
        t = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = max(best, sum(p.nbytes for p in parts) / (time.perf_counter() - t) / 1e9)
    return best


def weight_bytes(initializers) -> int:
    from onnx import numpy_helper

    return sum(numpy_helper.to_array(t).nbytes for t in initializers)


def any_cross_length(model, n_audio: int):
    """A copy of a head-major step graph whose cross K/V inputs take any number of encoder positions."""
    import onnx
    from onnx import numpy_helper

    m = onnx.ModelProto.FromString(model.SerializeToString())
    for i in m.graph.input:
        if i.name.startswith("cross_"):
            dim = i.type.tensor_type.shape.dim[2]
            dim.ClearField("dim_value")
            dim.dim_param = "encoder_positions"
    for t in m.graph.initializer:
        if t.data_type == onnx.TensorProto.INT64 and t.name.startswith("cross_"):
            shape = numpy_helper.to_array(t)
            t.CopyFrom(numpy_helper.from_array(np.where(shape == n_audio, -1, shape).astype(np.int64), t.name))
    return m


def lm_head_alone(model):
    """The step graph's LM head (the node reading the token embedding) as a graph of its own."""
    import onnx
    from onnx import helper

    node = next(n for n in model.graph.node if any("token_embedding" in i for i in n.input))
    inits = [t for t in model.graph.initializer if t.name in set(node.input[1:])]
    g = helper.make_graph([node], "lm_head", [helper.make_tensor_value_info(node.input[0], onnx.TensorProto.FLOAT,
                                                                           [1, 512])],
                          [helper.make_tensor_value_info(node.output[0], onnx.TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=model.opset_import), weight_bytes(inits)


class NativeRun:
    """The C step on the ONNX step graph's random feeds, called like a session (device/runner/native/step.py)."""

    def __init__(self, weights, feeds: dict[str, np.ndarray]):
        from device.runner.cache_paths import cache_home
        from device.runner.native.library import build_library
        from device.runner.native.step import NativeStep, native_weights

        d = weights.dims
        arrays = native_weights(weights.params, d)
        self.step = NativeStep(arrays, d, build_library(cache_home()))
        stacked = {name: np.ascontiguousarray(np.concatenate([feeds[f"{name}.{i}"] for i in range(d.n_text_layer)]))
                   for name in ("self_k", "self_v", "cross_k", "cross_v")}
        self.args = (feeds["x"], stacked["self_k"], stacked["self_v"], stacked["cross_k"], stacked["cross_v"],
                     feeds["mask"])
        self.step(*self.args)                       # packs the cross K/V once, as once a window
        packed = self.step._packed[2]
        self.weight_bytes = sum(a.nbytes for a in arrays.values())
        self.cross_bytes = sum(a.nbytes for a in packed)

    def run(self, _outputs, _feeds):
        return self.step(*self.args)


def random_feeds(session, sizes: dict[str, int], rng, any_dim: int = 0) -> dict[str, np.ndarray]:
    """Standard-normal float32 inputs; a symbolic dim takes its size from `sizes`, else `any_dim`."""
    return {i.name: rng.standard_normal([d if isinstance(d, int) else sizes.get(d, any_dim) for d in i.shape])
            .astype(np.float32) for i in session.get_inputs()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="int8b", choices=["int8b", "fp32"])
    ap.add_argument("--filled", type=int, default=100, help="cache slots holding tokens (the step number)")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--no-spin", action="store_true", help="onnx workers sleep between nodes (the studio's setting)")
    args = ap.parse_args(argv)

    weights = load_model(None)
    dims, p = weights.dims, weights.params
    step_graph, full_graph = (host_decoder(quantize_model(build(p, dims), args.dtype), dims.n_text_head)
                              for build in (G.build_decoder_step, G.build_decoder_full))
    lm_graph, lm_bytes = lm_head_alone(step_graph)
    cfg = RuntimeConfig(spin=not args.no_spin)
    step, cut = (_session(m.SerializeToString(), cfg) for m in (step_graph, any_cross_length(step_graph, dims.n_audio_ctx)))
    lm, full = (_session(m.SerializeToString(), cfg) for m in (lm_graph, full_graph))

    rng = np.random.default_rng(0)
    slots = -(-args.filled // 64) * 64         # the growing cache's size holding --filled tokens
    n = args.filled + 4
    feeds = random_feeds(step, {"cache_slots": slots, "cache_slots_and_token": slots + 1}, rng)
    feeds["mask"][...] = -1e9
    feeds["mask"][..., :args.filled] = feeds["mask"][..., -1] = 0
    cut_feeds = {k: v[:, :, :CUT_POSITIONS] if k.startswith("cross_") else v for k, v in feeds.items()}
    full_feeds = {**random_feeds(full, {}, rng, any_dim=n), **{k: v for k, v in feeds.items() if k.startswith("cross_")}}
    full_feeds["mask"] = np.triu(np.full((n, n), -1e9, np.float32), 1)[None, None]
    cases = {"step": (step, feeds), f"step, cross K/V cut to {CUT_POSITIONS} positions": (cut, cut_feeds),
             "LM head alone": (lm, {lm.get_inputs()[0].name: rng.standard_normal((1, 512)).astype(np.float32)}),
             f"uncached reference, {n} tokens": (full, full_feeds)}
    native = NativeRun(weights, feeds) if args.dtype == "int8b" and native_supported() else None
    if native is not None:
        cases["native-int8b step (C)"] = (native, feeds)

    evict = np.zeros(LLC_BYTES, np.uint8)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.rounds):
        for name, (s, f) in cases.items():
            for call in range(BLOCK):
                if name == "LM head alone":
                    evict += 1
                t = time.perf_counter()
                while time.perf_counter() - t < PYTHON_GAP_S:
                    pass
                t = time.perf_counter()
                s.run(None, f)
                if call:                # the first call of a block wakes the session's thread pool
                    times[name].append((time.perf_counter() - t) * 1e3)
    ms = {k: float(np.median(v)) for k, v in times.items()}

    cross_bytes = sum(v.nbytes for k, v in feeds.items() if k.startswith("cross_"))
    cache_bytes = sum(v[:, :, :args.filled].nbytes for k, v in feeds.items() if k.startswith("self_"))
    w_bytes = weight_bytes(step_graph.graph.initializer)
    total = w_bytes + cross_bytes + cache_bytes
    speed = read_speed()
    print(f"## what one {args.dtype} step reads at {args.filled} filled slots (MB = 1e6 bytes)")
    print(f"step weights {w_bytes / 1e6:.1f} (the LM head {lm_bytes / 1e6:.1f}), cross K/V {cross_bytes / 1e6:.1f}, "
          f"self cache {cache_bytes / 1e6:.1f}: {total / 1e6:.1f} MB")
    print(f"memory read speed, 2 threads: {speed:.1f} GB/s -> floor {total / speed / 1e6:.2f} ms a step")
    print(f"\n## median ms of {args.rounds} alternating rounds of {BLOCK - 1} calls")
    for name, v in ms.items():
        print(f"{name:38s} {v:7.2f} ms")
    print(f"\nthe step reads at {total / ms['step'] / 1e6:.1f} GB/s; reading the cross K/V costs "
          f"{ms['step'] - ms[f'step, cross K/V cut to {CUT_POSITIONS} positions']:.2f} ms "
          f"({cross_bytes / 1e6:.1f} MB); the LM head {ms['LM head alone']:.2f} ms ({lm_bytes / 1e6:.1f} MB)")
    print(f"uncached / cached: {ms[f'uncached reference, {n} tokens'] / ms['step']:.1f}x (the graphs alone); "
          f"10x needs a step of {ms[f'uncached reference, {n} tokens'] / 10:.2f} ms")
    if native is not None:
        nat = native.weight_bytes + native.cross_bytes + cache_bytes
        t = ms["native-int8b step (C)"]
        print(f"native-int8b step: weights {native.weight_bytes / 1e6:.1f} + cross K/V int8 "
              f"{native.cross_bytes / 1e6:.1f}"
              f" + cache {cache_bytes / 1e6:.1f} = {nat / 1e6:.1f} MB in {t:.2f} ms ({nat / t / 1e6:.1f} GB/s; floor "
              f"{nat / speed / 1e6:.2f} ms); uncached / native step: {ms[f'uncached reference, {n} tokens'] / t:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
