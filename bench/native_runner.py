"""The native runner (device/native_runner/) against the Python runner, side by side on one compiled dla bundle: the
cost per token outside the Neuron runtime's inference call, start-up to `hello`, and peak RSS.

    python bench/native_runner.py [--rounds 7] [--requests 3] [--max-tokens 224]

Both serve the STAND-IN ncc-tflite's compilation of the installed weights (tests/device/bundle_helpers.py) through
the STAND-IN Neuron runtime built INSTANT (tests/device/runner/standin/neuron_runtime.c): it reads the slots from
the .dla as a runtime would and each run returns at once, so what a token costs here is the runner's own work
(embedding lookup, cache bookkeeping, the logit rules, top-k, the event). The commands:

    whisperkv-runner --model BUNDLE --neuron-lib LIB
    python -m device.runner --backend dla --model BUNDLE --neuron-lib LIB

Each round starts both runners in turn (ABAB), fresh processes: start-up is spawn → `hello` arrival (the bundle
loaded); then `--requests` transcribes of test_en.wav's first window (`suppress_eot`, `language: en`), then VmHWM.
Per token, after the first (whose step runs the SOT prefix), three spacings, medians over a request's tokens:
- `sent_t` gap: between the runner's stamps of consecutive token events, taken just before each frame is written;
  the whole per-token cycle of the runner, event included, without the host's read scheduling. The headline;
- host gap: between the host's arrivals of consecutive token frames (what a client sees; frames that arrive in one
  read share a time, so this one is noisier);
- `ms`: the runner's own step time, the event's formatting and write excluded.
Figures are medians over the requests of all rounds; nothing here fails on a time. The runtime computes nothing,
so the tokens are whatever the rules pick from the logits buffers as they were left (the same on both runners).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.model.audio import load_audio  # noqa: E402
from core.model.mel import mel_windows  # noqa: E402
from device.protocol import PROTOCOL, FrameParser, encode_frame  # noqa: E402
from device.toolchain.native_runner_build import build  # noqa: E402
from tests.device.bundle_helpers import compiled_dla_bundle  # noqa: E402
from tests.device.runner.standin.build import build_standin  # noqa: E402

CLIP = ROOT / "resources" / "audio" / "test_en.wav"
RUNNERS = ("native", "python")


def commands(bundle: Path, lib: Path) -> dict[str, list[str]]:
    return {"native": [str(build("x86_64")), "--model", str(bundle), "--neuron-lib", str(lib)],
            "python": [sys.executable, "-m", "device.runner", "--backend", "dla", "--model", str(bundle),
                       "--neuron-lib", str(lib)]}


class Runner:
    """One runner process spoken to over its pipes, each frame stamped with the host's arrival time."""

    def __init__(self, cmd: list[str], log: Path):
        self.log = log
        self.t0 = time.perf_counter()
        with open(log, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=ROOT)
        self.parser = FrameParser()
        self.pending: list[tuple[float, dict]] = []

    def send(self, header: dict, payload: bytes = b"") -> None:
        self.proc.stdin.write(encode_frame(header, payload))
        self.proc.stdin.flush()

    def next_event(self) -> tuple[float, dict]:
        while not self.pending:
            data = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not data:
                raise RuntimeError(f"the runner ended; its stderr: {self.log.read_text()[-2000:]}")
            t = time.perf_counter()
            self.pending += [(t, f.header) for f in self.parser.feed(data)]
        return self.pending.pop(0)

    def hello_s(self) -> float:
        """Spawn to the `hello` event's arrival."""
        self.send({"op": "hello", "protocol": PROTOCOL})
        t, h = self.next_event()
        if h.get("type") != "hello":
            raise RuntimeError(f"hello answered {h}")
        return t - self.t0

    def transcribe(self, mel: np.ndarray, rid: str, max_tokens: int) -> list[tuple[float, dict]]:
        """The request's token events, each with its arrival time."""
        self.send({"op": "transcribe", "id": rid, "mel": {"shape": [1, *mel.shape], "dtype": str(mel.dtype)},
                   "language": "en", "suppress_eot": True, "max_tokens": max_tokens}, mel.tobytes())
        tokens = []
        while True:
            t, h = self.next_event()
            if h.get("type") == "error":
                raise RuntimeError(f"transcribe answered {h}")
            if h.get("type") == "token":
                tokens.append((t, h))
            if h.get("final"):
                return tokens

    def peak_rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        self.send({"op": "bye"})
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def spacings(tokens: list[tuple[float, dict]]) -> dict[str, float]:
    """A request's per-token medians in ms, from the second token on (the first carries the SOT prefix)."""
    arrival = [t for t, _ in tokens]
    sent = [h["sent_t"] for _, h in tokens]
    return {"sent_gap": float(np.median(np.diff(sent[1:]))) * 1000 if len(tokens) > 2 else float("nan"),
            "host_gap": float(np.median(np.diff(arrival[1:]))) * 1000 if len(tokens) > 2 else float("nan"),
            "ms": float(np.median([h["ms"] for _, h in tokens[1:]])) if len(tokens) > 1 else float("nan")}


@dataclass
class Figures:
    hello_s: list[float] = field(default_factory=list)
    peak_mib: list[float] = field(default_factory=list)
    per_token: list[dict[str, float]] = field(default_factory=list)
    tokens: int = 0

    def median(self, key: str) -> float:
        return statistics.median(p[key] for p in self.per_token)


def measure(cmds: dict[str, list[str]], mel: np.ndarray, rounds: int, requests: int, max_tokens: int,
            logs: Path) -> dict[str, Figures]:
    figs = {name: Figures() for name in cmds}
    for r in range(rounds):
        for name in cmds:                 # A then B in every round: ABAB
            runner = Runner(cmds[name], logs / f"{name}-{r}.log")
            try:
                figs[name].hello_s.append(runner.hello_s())
                for i in range(requests):
                    tokens = runner.transcribe(mel, f"r{r}-{i}", max_tokens)
                    figs[name].per_token.append(spacings(tokens))
                    figs[name].tokens = len(tokens)
                figs[name].peak_mib.append(runner.peak_rss_mib())
                runner.close()
            finally:
                if runner.proc.poll() is None:
                    runner.proc.kill()
                    runner.proc.wait()
        print(f"round {r + 1}/{rounds}: " + ", ".join(
            f"{n} {statistics.median(p['sent_gap'] for p in f.per_token[-requests:]):.3f} ms/token"
            for n, f in figs.items()), file=sys.stderr)
    return figs


def cpu_model() -> str:
    """`lscpu`'s "Model name", with the family and model /proc/cpuinfo gives."""
    info = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return f"{info.get('model name', '?')} (family {info.get('cpu family', '?')} model {info.get('model', '?')})"


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")      # a few tokens arriving in one read have a host gap of 0


def report(figs: dict[str, Figures], args: argparse.Namespace, load: tuple[float, float]) -> str:
    n, p = figs["native"], figs["python"]
    rows = [("per token, `sent_t` gap (ms)", "sent_gap"), ("per token, host gap (ms)", "host_gap"),
            ("per token, runner `ms` (ms)", "ms")]
    lines = [f"{cpu_model()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"load average {load[0]:.2f}–{load[1]:.2f}; {args.rounds} rounds ABAB, {args.requests} requests "
             f"of {n.tokens} tokens each a round", "",
             "| measure | native | python | native / python |", "|---|---|---|---|"]
    for label, key in rows:
        a, b = n.median(key), p.median(key)
        lines.append(f"| {label} | {a:.3f} | {b:.3f} | {ratio(a, b):.2g} |")
    for label, attr, fmt in (("start-up to `hello` (ms)", "hello_s", 1000.0), ("peak RSS, VmHWM (MiB)", "peak_mib", 1)):
        a, b = statistics.median(getattr(n, attr)) * fmt, statistics.median(getattr(p, attr)) * fmt
        lines.append(f"| {label} | {a:.1f} | {b:.1f} | {ratio(a, b):.2g} |")
    goal = ratio(n.median("sent_gap"), p.median("sent_gap"))
    lines += ["", f"per-token goal, native ≤ 1/5 of python (`sent_t` gap): ratio {goal:.2f}, "
              f"{'met' if goal <= 0.2 else 'not met'}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="starts of each runner, alternating")
    ap.add_argument("--requests", type=int, default=3, help="transcribes per start")
    ap.add_argument("--max-tokens", type=int, default=224)
    args = ap.parse_args(argv)
    mel = np.ascontiguousarray(mel_windows(load_audio(CLIP))[0], np.float16)
    with tempfile.TemporaryDirectory(prefix="whisperkv-native-bench-") as tmp:
        lib = build_standin(Path(tmp), "INSTANT", "PADDED")
        cmds = commands(compiled_dla_bundle(), lib)
        before = os.getloadavg()[0]
        figs = measure(cmds, mel, args.rounds, args.requests, args.max_tokens, Path(tmp))
        out = report(figs, args, (before, os.getloadavg()[0]))
    print(out)
    return out


if __name__ == "__main__":
    main()
