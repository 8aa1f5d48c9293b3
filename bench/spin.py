"""The local runner one-shot (as `whisperkv transcribe` starts it: threads spin) and lean, side by side: ms per token
around a step, quiet or beside busy processes.

    python bench/spin.py [--backend onnx-int8b] [--clip test_en.wav] [--steps 100] [--rounds 6] [--busy 0]

Two runners, one-shot as `whisperkv transcribe` starts it and lean (a board's default), both connected first;
then, in alternating rounds, one forced decode (EOT suppressed) of --clip's first window on each, cached and
uncached (--no-cache). Reported per runner: the median over the rounds of the per-token ms around --steps
(the runner's own `ms` for each token, as the studio plots it). --busy N keeps N processes spinning on the CPU
throughout, the way another busy program on the machine would. Never asserts a time.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.options import DecodeOptions  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.mel import mel_windows  # noqa: E402
from device.link.client import BoardClient  # noqa: E402
from device.link.local import LocalTransport  # noqa: E402

RUNNERS = {"one-shot (transcribe)": ["--workload", "one-shot"], "lean": ["--workload", "lean"]}


def per_token_ms(client: BoardClient, mel: np.ndarray, steps: int, cache: bool) -> float:
    opts = DecodeOptions(language="en", suppress_eot=True, max_tokens=steps + 6, cache=cache).to_wire()
    ms = [a.event.ms for a in client.transcribe(mel, opts) if a.event.type == "token"]
    return float(np.median(ms[steps - 5:steps + 6]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="onnx-int8b")
    ap.add_argument("--clip", default="test_en.wav")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--busy", type=int, default=0, help="processes spinning on the CPU meanwhile")
    args = ap.parse_args(argv)

    mel = mel_windows(load_audio(ROOT / "resources" / "audio" / args.clip))[:1]
    clients = {}
    busy = []
    try:
        for name, flags in RUNNERS.items():
            clients[name] = BoardClient(LocalTransport(), runner_args=["--backend", args.backend, *flags])
            clients[name].connect()
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        times = {(name, cache): [] for name in clients for cache in (True, False)}
        for _ in range(args.rounds):
            for name, client in clients.items():
                for cache in (True, False):
                    times[(name, cache)].append(per_token_ms(client, mel, args.steps, cache))
    finally:
        for p in busy:
            p.kill()
        for client in clients.values():
            client.close()
    print(f"## {args.backend}, ms per token at step {args.steps}, median of {args.rounds} alternating rounds, "
          f"{args.busy} busy process(es)")
    print(f"{'runner':22s} {'cached':>7s} {'uncached':>9s} {'uncached/cached':>16s}")
    ms = {k: float(np.median(v)) for k, v in times.items()}
    for name in clients:
        print(f"{name:22s} {ms[(name, True)]:7.2f} {ms[(name, False)]:9.2f} {ms[(name, False)] / ms[(name, True)]:15.1f}x")
    spin, plain = list(clients)
    print(f"one-shot / lean: cached {ms[(spin, True)] / ms[(plain, True)]:.2f}x, "
          f"uncached {ms[(spin, False)] / ms[(plain, False)]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
