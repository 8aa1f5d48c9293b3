"""Absorbed against kv cross-attention: what each form keeps, moves and costs per decode step.

    python3 bench/absorbed.py [--work DIR] [--backends onnx,tflite] [--clip test_en.wav] [--steps 100]
                              [--rounds 2] [--bandwidths 10,17,34] [--only-bytes] [--int-bundles A,B]

1. Exports two fp32 bundles (ONNX + TFLite) into --work: `whisperkv export --cross kv` and `--cross absorbed`
   (kept and reused when --work already holds them).
2. From the TFLite step graphs, with no timing: the bytes a decode step moves — weights (every constant),
   the self K/V cache and the cross state — and what that implies as a floor on ms per token for a board
   with memory bandwidth B, in fp16 (what the MDLA computes; `ncc-tflite --relax-fp32`). Three ways to count
   the caches' traffic: "once" (each distinct cache tensor read once from DRAM: kv's 12 cross K/V tensors,
   absorbed's one F, kept on chip for its 12 uses), "folded" (every use by a compute op reads DRAM; layout
   ops — transposes, splits — folded into their consumers) and "op by op" (every read by a non-view op, and
   every layout copy written, goes to DRAM). Then the same counts by dtype (DTYPE_BYTES) at steps 1, 32, 100
   and 200, split into weights, cross state, self cache (the slots filled) and logits, with the floor at the
   middle --bandwidths figure; and with --int-bundles, the same split counted from integer step graphs as
   written (bench/bytes_by_dtype.py), e.g. a mixed recipe's, whose float parts a board computes in fp16.
3. On this host, per backend and form: a real runner process (`python -m device.runner --model BUNDLE
   --backend B --encoder-cache-mb 0`) over the local link decodes --clip's first window with EOT suppressed
   to --steps + 6 tokens; reported are the cross bytes it holds (its `encoded` event), its RSS at step
   --steps (MiB, VmRSS; lowest of the rounds), idle after the rounds, and its peak (VmHWM), the encoder ms
   and the runner's ms per token at step 1 (steps 1-5, median; step 0 carries the SOT prefix) and at step
   --steps (median of --steps±5). All runners start first; after a warm-up request each, --rounds rounds
   alternate the configurations; best round kept. Never asserts a time.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bytes_by_dtype import dtype_report, graph_report
from bench.step_bytes import step_bytes
from core.decode.options import DecodeOptions
from core.model.audio import load_audio
from core.model.dims import ModelDims
from core.model.kv_cache import KVCache
from core.model.mel import mel_windows
from core.model.weights import load_model
from device.link.client import BoardClient
from device.link.local import LocalTransport
from device.runner.backends import make_backend
from device.runner.bundle import read_bundle
from device.toolchain.export import export_bundle

AUDIO = ROOT / "resources" / "audio"
FORMS = ("kv", "absorbed")


def bundles(work: Path) -> dict[str, Path]:
    """{form: fp32 ONNX+TFLite bundle}, exported unless --work already holds it."""
    out, weights = {}, None
    for form in FORMS:
        path = work / f"fp32-{form}"
        try:
            ok = read_bundle(path).cross == form and {"encoder_tflite", "decoder_step"} <= set(
                read_bundle(path).manifest["graphs"])
        except Exception:
            ok = False
        if not ok:
            weights = weights or load_model()
            print(f"exporting the {form} bundle to {path}", file=sys.stderr, flush=True)
            export_bundle(weights, path, "fp32", cross=form)
        out[form] = path
    return out


def bytes_report(paths: dict[str, Path], bandwidths: list[float], int_bundles: list[Path] = ()) -> dict:
    counted = {form: step_bytes(read_bundle(p).graph_path("decoder_step", "tflite").read_bytes())
               for form, p in paths.items()}
    d = ModelDims()
    counts = ("once", "folded", "op")
    print("## bytes a decode step reads, from the TFLite step graphs, in fp16 MB (1e6 B; what the MDLA runs)")
    print(f"{'form':<9} {'held':>6} {'weights':>8} " + " ".join(f"{k + ' ' + c:>12}" for c in counts
                                                                    for k in ("self", "cross"))
          + " " + " ".join(f"{'step ' + c:>12}" for c in counts))
    for form, b in counted.items():
        held = (2 * d.n_text_layer if form == "kv" else 1) * d.n_audio_ctx * d.n_text_state * 2
        cells = [getattr(b, f"{k}_{c}") / 2e6 for c in counts for k in ("self", "cross")]
        print(f"{form:<9} {held / 1e6:6.2f} {b.weights / 2e6:8.1f} " + " ".join(f"{v:12.1f}" for v in cells)
              + " " + " ".join(f"{b.total(c) / 1e6:12.1f}" for c in counts))
    print("\n## floor on ms per token = bytes per step / B (fp16, one stream)")
    print(f"{'B GB/s':>7} " + " ".join(f"{f + ' ' + c:>16}" for f in counted for c in counts))
    for bw in bandwidths:
        print(f"{bw:7.0f} " + " ".join(f"{counted[f].total(c) / (bw * 1e9) * 1e3:16.2f}"
                                       for f in counted for c in counts))
    dtype_report(counted, bandwidths)
    measured = graph_report(int_bundles, counted, bandwidths) if int_bundles else {}
    return {form: vars(b) for form, b in counted.items()} | {"integer_graphs": measured}


def _vm(pid: int, key: str) -> float:
    """A /proc/<pid>/status figure (VmRSS, VmHWM) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _round(client, mel: np.ndarray, steps: int) -> dict:
    """One forced long decode: encoder ms, ms per token at step 1 and at `steps`, the cross state reported,
    and the runner's RSS at step `steps` (while it holds the window's cross state and self cache)."""
    opts = DecodeOptions(language="en", suppress_eot=True, max_tokens=steps + 6)
    events, rss = [], float("nan")
    for a in client.transcribe(mel, opts):
        events.append(a.event)
        if a.event.type == "token" and a.event.step == steps:
            rss = _vm(client._stream.proc.pid, "VmRSS")
    enc = next(e for e in events if e.type == "encoded")
    ms = [e.ms for e in events if e.type == "token"]
    return {"encoder_ms": enc.ms, "step1_ms": float(np.median(ms[1:6])),
            f"step{steps}_ms": float(np.median(ms[steps - 5:steps + 6])), "tokens": len(ms),
            "cross_form": enc.cross_form, "cross_bytes": enc.cross_bytes, "rss_decoding_mib": rss}


def measure(configs: dict[str, tuple[Path, str]], mel: np.ndarray, steps: int, rounds: int) -> dict:
    """One runner process per configuration ({name: (bundle, backend)}), all started first (each idles
    while another decodes), a warm-up request each, then `rounds` rounds that alternate the configurations,
    so that load from elsewhere on the machine falls on all of them alike. Best round per figure."""
    clients, best = {}, {name: {} for name in configs}
    try:
        for name, (bundle, backend) in configs.items():
            print(f"starting the {name} runner", file=sys.stderr, flush=True)
            clients[name] = BoardClient(LocalTransport(), runner_args=[
                "--model", str(bundle), "--backend", backend, "--encoder-cache-mb", "0", "--log-level", "WARNING"],
                connect_timeout=900, read_timeout=600, mel_dtype="float32")
            clients[name].connect()
            list(clients[name].transcribe(mel, DecodeOptions(language="en", max_tokens=8)))
        for r in range(rounds):
            for name, client in clients.items():
                for k, v in _round(client, mel, steps).items():
                    best[name][k] = min(best[name].get(k, v), v) if k.endswith(("_ms", "_mib")) else v
            print(f"round {r + 1} done", file=sys.stderr, flush=True)
        for name, client in clients.items():
            pid = client._stream.proc.pid
            best[name]["rss_idle_mib"], best[name]["peak_rss_mib"] = _vm(pid, "VmRSS"), _vm(pid, "VmHWM")
    finally:
        for client in clients.values():
            client.close()
    return best


def step_times(paths: dict[str, Path], backends: list[str], mel: np.ndarray, reps: int) -> dict:
    """In one process: each backend and form's step graph alone, at cache_len 100, `reps` calls alternating
    the configurations; (min, median) ms. The minimum is the least disturbed by other load on the machine."""
    steps, times = {}, {}
    for backend in backends:
        for form in FORMS:
            b = make_backend(backend, paths[form])
            d = b.dims
            cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
            rng = np.random.default_rng(0)
            for _ in range(100):
                cache.write(*(rng.standard_normal((2, d.n_text_layer, 1, 1, d.n_text_state)).astype(np.float32)))
            x = rng.standard_normal((1, 1, d.n_text_state)).astype(np.float32)
            args = (x, cache.k, cache.v, *b.encode(mel), cache.mask())
            b.step(*args)
            steps[f"{backend} {form}"], times[f"{backend} {form}"] = (b, args), []
    for _ in range(reps):
        for name, (b, args) in steps.items():
            t0 = time.perf_counter()
            b.step(*args)
            times[name].append((time.perf_counter() - t0) * 1e3)
    return {name: (min(t), float(np.median(t))) for name, t in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default=None, help="where the two bundles are exported (default: a temp dir)")
    ap.add_argument("--backends", default="onnx,tflite")
    ap.add_argument("--clip", default="test_en.wav")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--bandwidths", default="10,17,34", help="GB/s, for the floor on ms per token")
    ap.add_argument("--only-bytes", action="store_true", help="skip the runner measurements")
    ap.add_argument("--int-bundles", default="", help="integer TFLite bundles (whisperkv export --dtype a16w8|a8w8|"
                    "mixed), ',' separated: their step graphs counted as written")
    ap.add_argument("--step-reps", type=int, default=0, help="also time the step graphs alone in this process, "
                    "this many alternating calls each (0: skip)")
    ap.add_argument("--json", default=None, help="also write every figure to this file")
    args = ap.parse_args(argv)

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="whisperkv-absorbed-"))
    paths = bundles(work)
    result = {"bytes": bytes_report(paths, [float(b) for b in args.bandwidths.split(",")],
                                    [Path(b) for b in args.int_bundles.split(",") if b])}
    if not args.only_bytes:
        mel = mel_windows(load_audio(AUDIO / args.clip))[:1]
        configs = {f"{backend} {form}": (paths[form], backend) for backend in args.backends.split(",")
                   for form in FORMS}
        runs = measure(configs, mel, args.steps, args.rounds)
        s = args.steps
        print(f"\n## on this host, fp32, {args.clip} (first window), EOT suppressed, best of {args.rounds} rounds")
        print(f"{'backend form':<16} {'cross MB':>9} {f'RSS @{s}':>8} {'RSS idle':>9} {'peak MiB':>9} "
              f"{'encoder ms':>11} {'ms/tok @1':>10} {f'ms/tok @{s}':>11}")
        for name, r in runs.items():
            print(f"{name:<16} {r['cross_bytes'] / 1e6:9.2f} {r['rss_decoding_mib']:8.0f} {r['rss_idle_mib']:9.0f} "
                  f"{r['peak_rss_mib']:9.0f} "
                  f"{r['encoder_ms']:11.0f} {r['step1_ms']:10.1f} {r[f'step{s}_ms']:11.1f}")
        result["host"] = runs
        if args.step_reps:
            got = step_times(paths, args.backends.split(","), mel, args.step_reps)
            print(f"\n## the step graph alone at cache_len 100, in one process, {args.step_reps} alternating calls")
            print(f"{'backend form':<16} {'min ms':>7} {'median ms':>10}")
            for name, (lo, med) in got.items():
                print(f"{name:<16} {lo:7.2f} {med:10.2f}")
            result["step_alone"] = got
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
