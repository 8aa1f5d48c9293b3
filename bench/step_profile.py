"""Where one decode step's time goes: the backend call, the Python between two calls, and (ONNX
Runtime backends) the graph's time by operator type.

    python bench/step_profile.py [--backends native-int8b,onnx,onnx-int8] [--clip test_en.wav] [--steps 100]
                                 [--timestamps] [--no-spin]

A forced decode (EOT suppressed) of --steps tokens on the first window of --clip. "python ms" is the
wall time from one `backend.step` returning to the next one being called: the logit rules, log-softmax,
top-k, the event, the cache write, the embedding lookup, and the event's frame as the runner writes it
(device/runner/serve/agent.py: the event as a dict, JSON, a write; here to /dev/null). "decode alone" is the same
decode with the events only collected, no frames. The operator table comes from ONNX Runtime's own profiler
over the same decode, as a share of the summed node time. Sessions as a one-shot `whisperkv transcribe` runs
them: worker threads spin within a run (--no-spin: as the studio runs them). Never asserts a time.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.decoding import decode_windows  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.mel import mel_windows  # noqa: E402


class StepTimer:
    """Wraps a backend's `step`: the time inside each call, and the gap since the previous call returned."""

    def __init__(self, backend):
        self.backend, self.inner, self.gaps, self.calls = backend, backend.step, [], []
        self._returned = None
        backend.step = self

    def __call__(self, *args):
        t = time.perf_counter()
        if self._returned is not None:
            self.gaps.append(t - self._returned)
        out = self.inner(*args)
        self._returned = time.perf_counter()
        self.calls.append(self._returned - t)
        return out

    def reset(self) -> None:
        self.gaps, self.calls, self._returned = [], [], None


def as_runner_frames(events, fd: int):
    """The events, each first written as the runner's frame (device/runner/serve/agent.py) to `fd`."""
    from core.decode.events import event_to_dict
    from device.runner.serve.writer import Writer

    out = Writer(fd)
    for ev in events:
        out.send({**event_to_dict(ev), "id": "bench"})
        yield ev


def op_table(profile_json: Path, runs: int) -> list[tuple[str, float, int]]:
    """(op type, share of the summed node time, nodes per run) from an ONNX Runtime profile."""
    total, count = collections.Counter(), collections.Counter()
    for e in json.loads(profile_json.read_text()):
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            total[e["args"]["op_name"]] += e["dur"]
            count[e["args"]["op_name"]] += 1
    s = sum(total.values())
    return [(op, t / s, count[op] // runs) for op, t in total.most_common(8)]


def profile_ops(name: str, mel: np.ndarray, opts: DecodeOptions, spin: bool) -> list[tuple[str, float, int]]:
    """The same decode on a fresh backend whose step session has ONNX Runtime's profiler on."""
    from core.model.weights import load_model
    from device.runner.backends import make_backend
    from device.runner.load import load_model_source
    from device.spec.runtime_config import RuntimeConfig

    weights = load_model(None)
    backend = make_backend(name, weights, config=RuntimeConfig(spin=spin,
                                                               profile=str(Path(tempfile.mkdtemp()) / "step")))
    tokenizer = load_model_source(None, "numpy").tokenizer
    runs = sum(1 for e in decode_windows(backend, tokenizer, mel, opts) if e.type == "token")
    return op_table(Path(backend.end_profiling()), runs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="native-int8b,onnx-int8b,onnx,onnx-int8")
    ap.add_argument("--clip", default="test_en.wav")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--timestamps", action="store_true", help="decode with timestamp tokens (long audio, subtitles)")
    ap.add_argument("--no-spin", action="store_true",
                    help="worker threads sleep between nodes, native-int8b's soon after a step (the studio's setting)")
    args = ap.parse_args(argv)

    from device.runner.load import load_model_source
    from device.spec.runtime_config import RuntimeConfig

    mel = mel_windows(load_audio(ROOT / "resources" / "audio" / args.clip))[:1]
    opts = DecodeOptions(language="en", suppress_eot=True, max_tokens=args.steps, timestamps=args.timestamps)
    print(f"## one step, forced decode of {args.clip} ({args.steps} tokens), medians over the decode")
    print(f"{'backend':12s} {'step ms':>8s} {'python ms':>10s} {'python p90':>10s} {'decode alone':>12s} "
          f"{'token ms':>9s}")
    ops = {}
    devnull = os.open(os.devnull, os.O_WRONLY)
    for name in args.backends.split(","):
        model = load_model_source(None, name, config=RuntimeConfig(spin=not args.no_spin))
        timer = StepTimer(model.backend)
        list(model.transcribe(mel, opts))                # warm-up: arenas, caches, first-call costs
        timer.reset()
        list(model.transcribe(mel, opts))
        alone = np.median(timer.gaps) * 1e3
        timer.reset()
        events = list(as_runner_frames(model.transcribe(mel, opts), devnull))
        token_ms = np.median([e.ms for e in events if e.type == "token"][5:])
        gaps = np.array(timer.gaps) * 1e3
        print(f"{name:12s} {np.median(timer.calls) * 1e3:8.2f} {np.median(gaps):10.3f} {np.percentile(gaps, 90):10.3f} "
              f"{alone:12.3f} {token_ms:9.2f}")
        if name.startswith("onnx"):
            ops[name] = profile_ops(name, mel, opts, not args.no_spin)
    for name, table in ops.items():
        print(f"\n## {name}: ONNX Runtime node time by operator type (profiler, the same decode)")
        for op, share, per_run in table:
            print(f"  {op:22s} {share * 100:5.1f} %  {per_run:4d} nodes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
