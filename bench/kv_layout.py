"""The decoder step with its K/V stacked or head-major, side by side in one process on the same feeds.

    python bench/kv_layout.py [--dtype int8b|fp32] [--filled 100] [--rounds 30] [--uncached]

Four host graphs of the step (device/graphs/host_passes.py): the cross K/V and the cache stacked
[1, 1, T, 512] a layer (what the board's graphs take); the cross K/V head-major [1, 8, T, 64]; the cache
too; and the cache of any length, fed the first multiple of 64 slots that holds --filled tokens. Random
feeds, the cache's unfilled slots masked. With --uncached, the uncached reference's graph instead (all
--filled + 4 tokens at once, causal), cross K/V stacked and head-major: it reads the same cross K/V as the
step, so its time is checked for the ratio of the two. Prints each graph's median call time over alternating
rounds and whether its outputs equal the stacked graph's. Never asserts a time.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.model.kv_cache import to_head_major  # noqa: E402
from core.model.weights import load_model  # noqa: E402
from device.graphs import onnx_graphs as G  # noqa: E402
from device.graphs.host_passes import fuse_layer_norms, growing_cache, head_major_kv  # noqa: E402
from device.graphs.quantize import quantize_model  # noqa: E402
from device.runner.onnx.ort_session import open_session  # noqa: E402
from device.spec.runtime_config import RuntimeConfig  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="int8b", choices=["int8b", "fp32"])
    ap.add_argument("--filled", type=int, default=100, help="cache slots holding tokens")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--uncached", action="store_true", help="time the uncached reference's graph instead")
    args = ap.parse_args(argv)

    weights = load_model(None)
    h = weights.dims.n_text_head
    build = G.build_decoder_full if args.uncached else G.build_decoder_step
    stacked = fuse_layer_norms(G.per_layer_inputs(quantize_model(build(weights.params, weights.dims), args.dtype)))
    n = args.filled + 4
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal([d.dim_value or n for d in i.type.tensor_type.shape.dim]).astype(np.float32)
             for i in stacked.graph.input}
    moved = lambda prefixes: {k: np.ascontiguousarray(to_head_major(v, h)) if k.startswith(prefixes) else v
                              for k, v in feeds.items()}
    if args.uncached:
        feeds["mask"] = np.triu(np.full((n, n), -1e9, np.float32), 1)[None, None]
        cases = [("uncached, cross K/V stacked", stacked, feeds),
                 ("uncached, cross K/V head-major", head_major_kv(stacked, h), moved(("cross_",)))]
    else:
        feeds["mask"][...] = -1e9
        feeds["mask"][..., :args.filled] = feeds["mask"][..., -1] = 0
        both = head_major_kv(stacked, h)
        slots = -(-args.filled // 64) * 64
        fewer = {k: v[:, :, :slots] if k.startswith("self_") else v for k, v in moved(("cross_", "self_")).items()}
        fewer["mask"] = np.concatenate([feeds["mask"][..., :slots], feeds["mask"][..., -1:]], axis=-1)
        cases = [("stacked K/V (board layout)", stacked, feeds),
                 ("cross K/V head-major", head_major_kv(stacked, h, names=("cross_k", "cross_v")), moved(("cross_",))),
                 ("cross K/V and cache head-major", both, moved(("cross_", "self_"))),
                 (f"... and the cache at {slots} slots", growing_cache(both), fewer)]
    sessions = [(name, open_session(g.SerializeToString(), RuntimeConfig()), f) for name, g, f in cases]

    reference = sessions[0][1].run(None, sessions[0][2])
    times: dict[str, list[float]] = {name: [] for name, _, _ in sessions}
    for _ in range(args.rounds):
        for name, s, f in sessions:
            t = time.perf_counter()
            s.run(None, f)
            times[name].append(time.perf_counter() - t)
    what = f"uncached reference, {n} tokens" if args.uncached else f"decoder step, {args.filled} filled slots"
    print(f"## {what}, {args.dtype}, median of {args.rounds} alternating rounds")
    base = np.median(times[sessions[0][0]])
    for name, s, f in sessions:
        same = all(np.array_equal(a, b) for a, b in zip(reference, s.run(None, f)))
        ms = np.median(times[name])
        print(f"{name:34s} {ms * 1e3:7.2f} ms  {ms / base:5.2f}x  outputs {'identical' if same else 'DIFFER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
