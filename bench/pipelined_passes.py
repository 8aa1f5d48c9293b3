"""Pipelined stream passes (issue 55, item 5), side by side in one run: would encoding the next pass's buffer while
this pass decodes shorten a live stream's pass period on this machine?

    python bench/pipelined_passes.py [--backends auto,onnx] [--window 20] [--buffer-s 12] [--rounds 7]

A stream pass encodes its buffer, then decodes it (core/stream/one_pass.py). Back to back, a pass period is E + D and
the commit lag about the frame threshold plus 1.5 periods (the issue's model); pipelined, the next pass's encoder
runs beside this pass's decode, on the other core, and the period is the longer of the two as they run together.
Per round, on test_en.wav's first `--buffer-s` (this pass) and congrats' (the next pass) in a `--window` s window:
E, the encoder alone; D, the decode alone (its cross state from the encoder cache); then both at once in two
threads (ONNX Runtime and the C step release the GIL), each timed, and the wall until both end. Rounds alternate
the orders. Prints the medians, the period both ways and their ratio, and the machine's load average; never
asserts anything. What it does not measure: the lag of a stream that pipelines, which no runner here serves (a
runner decodes one request at a time).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.decoding import decode_window  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.model.audio import SAMPLE_RATE, load_audio  # noqa: E402
from core.model.backend import encode_sized  # noqa: E402
from core.model.encoder_cache import EncoderCache  # noqa: E402
from core.model.mel import mel_windows  # noqa: E402
from core.model.tokenizer import WhisperTokenizer  # noqa: E402
from core.model.weights import load_model  # noqa: E402
from device.runner.backends import make_backend  # noqa: E402

AUDIO = ROOT / "resources" / "audio"


def buffer_mel(name: str, seconds: float):
    return mel_windows(load_audio(AUDIO / name)[:int(seconds * SAMPLE_RATE)])[:1]


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def one_backend(name: str, weights, args) -> dict:
    backend, tok = make_backend(name, weights), WhisperTokenizer.from_weights(weights)
    this, after = buffer_mel("test_en.wav", args.buffer_s), buffer_mel("en_asterisk_demo-congrats.wav", args.buffer_s)
    options = DecodeOptions(language="en", window_s=args.window)
    cache = EncoderCache(1 << 30)

    def encode():
        encode_sized(backend, after, args.window)

    def decode():
        for _ in decode_window(backend, tok, this[0], options, encoder_cache=cache):
            pass

    decode(), encode()                                  # warm: the window's encoder built, this pass's cross cached
    rows = {"E": [], "D": [], "E beside D": [], "D beside E": [], "both": []}
    for r in range(args.rounds):
        for part in (("E", "D") if r % 2 else ("D", "E")):
            rows[part].append(timed(encode if part == "E" else decode))
        took: dict = {}
        threads = [threading.Thread(target=lambda k=k, f=f: took.__setitem__(k, timed(f)))
                   for k, f in (("D beside E", decode), ("E beside D", encode))[::1 if r % 2 else -1]]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rows["both"].append((time.perf_counter() - t0) * 1e3)
        for k, v in took.items():
            rows[k].append(v)
    return {k: statistics.median(v) for k, v in rows.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backends", default="auto,onnx")
    p.add_argument("--window", type=int, default=20)
    p.add_argument("--buffer-s", type=float, default=12.0)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    weights = load_model()
    print(f"window {args.window} s, buffers of {args.buffer_s:g} s, {args.rounds} rounds, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'backend':<14}{'E':>8}{'D':>8}{'E beside D':>12}{'D beside E':>12}{'E+D':>8}{'pipelined':>11}{'ratio':>7}")
    for name in args.backends.split(","):
        m = one_backend(name, weights, args)
        period = m["E"] + m["D"]
        print(f"{name:<14}{m['E']:>8.0f}{m['D']:>8.0f}{m['E beside D']:>12.0f}{m['D beside E']:>12.0f}{period:>8.0f}"
              f"{m['both']:>11.0f}{m['both'] / period:>7.2f}")
    print(f"(ms, medians; load average {os.getloadavg()[0]:.1f} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
