"""End to end, fresh process each: `whisperkv transcribe --json` total_ms vs faster-whisper's first
`transcribe()` call, both with the model load excluded.

    python bench/speed.py [--backends auto,onnx-int8b,onnx,onnx-int8] [--windows 30,auto] [--clips test_en.wav,...]
                          [--rounds 3]

Ours: total_ms as the CLI reports it (audio load + mel + encoder + decode, after the model load), once per
--windows value (`transcribe --window`: 30, Whisper's own, or auto, sized to the audio).
faster-whisper: the same weights (CTranslate2 int8 and float32), cpu_threads=2, beam_size=1,
temperature 0 (greedy, no fallback), without_timestamps=True, language auto-detected like ours;
timed from just before transcribe() until its segments are consumed. Every run is a fresh
process; systems alternate within a round so a busy machine slows all of them alike, and the
median of the rounds is kept. Never asserts a time.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core.qa.scoring import error_rate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
AUDIO = ROOT / "resources" / "audio"
CLIPS = ["test_en.wav", "test_zh.wav", "en_arctic_slt_a0009.wav", "en_librivox_sense_sensibility_0870.wav",
         "en_asterisk_hello-world.wav", "en_asterisk_demo-congrats.wav"]


def fw_child(compute_type: str, clip: str, threads: int) -> None:
    """Runs in its own process: load (not timed), then the first transcribe() call (timed)."""
    sys.path.insert(0, str(ROOT))
    from bench.fw import load

    model = load(compute_type, threads)
    t0 = time.perf_counter()
    segments, info = model.transcribe(str(AUDIO / clip), beam_size=1, best_of=1, temperature=0.0,
                                      without_timestamps=True, vad_filter=False)
    segs = list(segments)
    total_ms = (time.perf_counter() - t0) * 1e3
    print(json.dumps({"total_ms": total_ms, "tokens": sum(len(s.tokens) for s in segs),
                      "text": "".join(s.text for s in segs).strip(), "language": info.language}))


def run_json(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout[out.stdout.index("{"):])


def ours(backend: str, clip: str, window: str = "30") -> dict:
    doc = run_json([sys.executable, "-m", "cli.main", "transcribe", str(AUDIO / clip), "--json", "--backend", backend,
                    "--window", window])
    return {"total_ms": doc["total_ms"], "tokens": doc["n_steps"], "text": doc["text"], "backend": doc["backend"],
            "per_token_ms": doc["per_token_ms_median"], "encoder_ms": doc["encoder_ms"]}


def fw(compute_type: str, clip: str, threads: int) -> dict:
    return run_json([sys.executable, str(Path(__file__).resolve()), "--fw-child", compute_type, clip,
                     "--threads", str(threads)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="auto,onnx-int8b,onnx,onnx-int8")
    ap.add_argument("--windows", default="30", help="transcribe --window values, each a system (e.g. 30,auto)")
    ap.add_argument("--clips", default=",".join(CLIPS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fw-child", nargs=2, metavar=("COMPUTE_TYPE", "CLIP"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.fw_child:
        fw_child(args.fw_child[0], args.fw_child[1], args.threads)
        return 0

    systems = {f"ours {b}" + (f" w {w}" if w != "30" else ""): (lambda clip, b=b, w=w: ours(b, clip, w))
               for b in args.backends.split(",") for w in args.windows.split(",")}
    systems |= {f"fw {ct}": (lambda clip, ct=ct: fw(ct, clip, args.threads)) for ct in ("int8", "float32")}
    clips = args.clips.split(",")
    runs: dict[tuple[str, str], list[dict]] = {}
    for r in range(args.rounds):
        for clip in clips:
            for name, fn in systems.items():
                runs.setdefault((name, clip), []).append(fn(clip))
            print(f"round {r + 1}/{args.rounds}: {clip}", file=sys.stderr, flush=True)

    med = {k: statistics.median(x["total_ms"] for x in v) for k, v in runs.items()}
    refs = json.loads((AUDIO / "transcripts.json").read_text())
    print(f"## fresh-process total_ms, median of {args.rounds} rounds (ratio = system / fw int8; < 1 is faster);"
          " error = WER, or CER for zh, against resources/audio/transcripts.json")
    print(f"{'clip':<40} {'system':<18} {'total ms':>9} {'ratio':>6} {'tokens':>6} {'error':>6}  text")
    errors: dict[str, list[float]] = {}
    for clip in clips:
        ref = med[("fw int8", clip)]
        for name in systems:
            last = runs[(name, clip)][-1]
            label = f"{name} ({last['backend']})" if "backend" in last and name.startswith("ours auto") else name
            err = error_rate(refs[clip]["reference"], last["text"], refs[clip]["language"]) if clip in refs else None
            errors.setdefault(name, []).append(err if err is not None else float("nan"))
            print(f"{clip:<40} {label:<18} {med[(name, clip)]:9.0f} {med[(name, clip)] / ref:6.2f} "
                  f"{last['tokens']:6d} {err if err is not None else float('nan'):6.3f}  {last['text'][:40]!r}")
    print("## mean error rate over the clips: " + ", ".join(
        f"{name} {statistics.fmean(v):.3f}" for name, v in errors.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
