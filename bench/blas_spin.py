"""OpenBLAS's idle threads spinning (its default) against sleeping at once (the runner's and the CLI's setting,
device/spec/runtime_config.py), side by side: wall and CPU seconds of the NumPy backend decoding a clip.

    python bench/blas_spin.py [--clip test_en.wav] [--rounds 4] [--busy 0]

Each round decodes --clip's first window on the NumPy backend, cache on, in a fresh process for each setting (the
timeout is read once, when NumPy loads), alternating. Reported: the median over the rounds of each one's wall and
CPU time around the decode (the load not counted). --busy N keeps N processes spinning on the CPU throughout, as
another busy program would. Never asserts a time.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {"spinning (OpenBLAS default)": "28", "sleeping (runner, CLI)": "4"}
ONE_DECODE = """
import json, sys, time
from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.model.audio import load_audio
from core.model.mel import mel_windows
from device.runner.load import load_model_source
m = load_model_source(None, "numpy")
mel = mel_windows(load_audio(sys.argv[1]))[:1]
wall, cpu = time.perf_counter(), time.process_time()
list(decode_windows(m.backend, m.tokenizer, mel, DecodeOptions(language="en")))
print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""


def one_decode(clip: Path, timeout: str) -> tuple[float, float]:
    env = {**os.environ, "OPENBLAS_THREAD_TIMEOUT": timeout}
    out = subprocess.run([sys.executable, "-c", ONE_DECODE, str(clip)], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    return tuple(json.loads(out.splitlines()[-1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clip", default="test_en.wav")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--busy", type=int, default=0, help="processes spinning on the CPU meanwhile")
    args = ap.parse_args(argv)
    clip = ROOT / "resources" / "audio" / args.clip
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        runs = {name: [] for name in SETTINGS}
        for _ in range(args.rounds):
            for name, timeout in SETTINGS.items():
                runs[name].append(one_decode(clip, timeout))
    finally:
        for p in busy:
            p.kill()
    print(f"## NumPy backend, {args.clip}, median of {args.rounds} alternating rounds, {args.busy} busy process(es)")
    print(f"{'OpenBLAS threads':30s} {'wall s':>7s} {'CPU s':>7s}")
    med = {name: np.median(np.array(v), axis=0) for name, v in runs.items()}
    for name, (wall, cpu) in med.items():
        print(f"{name:30s} {wall:7.2f} {cpu:7.2f}")
    (spin_wall, spin_cpu), (sleep_wall, sleep_cpu) = med.values()
    print(f"sleeping / spinning: wall {sleep_wall / spin_wall:.2f}x, CPU {sleep_cpu / spin_cpu:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
