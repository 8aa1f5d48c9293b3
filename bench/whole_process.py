"""Whole process, side by side: `whisperkv transcribe CLIP` against a faster-whisper script that loads
`WhisperModel` (int8, the same weights) and transcribes the same clip, alternating, fresh processes.

    python bench/whole_process.py [--clip test_en.wav] [--runs 5] [--ours "whisperkv transcribe"]
    python bench/whole_process.py --fw-child CLIP       # the faster-whisper side on its own

Reports, as medians over --runs and their ratio ours/faster-whisper:
- wall: from spawn to exit;
- peak RSS, largest process: what `/usr/bin/time -v` calls "Maximum resident set size" (the kernel's
  ru_maxrss for the child and the children it waited for, so for us the larger of the CLI and its runner);
- peak RSS, whole tree: the largest sum over the process and its descendants, sampled every 10 ms.
A first run warms the page cache and our start-up cache and is not counted. Never asserts a time.
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUDIO = ROOT / "resources" / "audio"


def fw_child(clip: str, beam: int) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.fw import load

    segments, _ = load("int8", 2).transcribe(str(AUDIO / clip), beam_size=beam)
    print(" ".join(s.text.strip() for s in segments))


def _tree_rss_kib(pid: int) -> int:
    """Resident KiB of `pid` and every descendant."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def measure(cmd: list[str]) -> tuple[float, float, float, str]:
    """(wall s, peak RSS MiB of the largest process, peak RSS MiB of the whole tree, stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    peak_tree, done = [0], threading.Event()

    def sample():
        while not done.wait(0.01):
            peak_tree[0] = max(peak_tree[0], _tree_rss_kib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{shlex.join(cmd)} exited {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, peak_tree[0] / 1024, out.decode(errors="replace").strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clip", default="test_en.wav")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--beam", type=int, default=5, help="faster-whisper's beam size (its default is 5)")
    ap.add_argument("--ours", default="whisperkv transcribe", help="our command; the clip path is appended")
    ap.add_argument("--fw-child", metavar="CLIP", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.fw_child:
        fw_child(args.fw_child, args.beam)
        return 0

    systems = {"ours": [*shlex.split(args.ours), str(AUDIO / args.clip)],
               "faster-whisper int8": [sys.executable, __file__, "--fw-child", args.clip, "--beam", str(args.beam)]}
    for cmd in systems.values():
        measure(cmd)                                    # warm-up, not counted
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in systems}
    texts = {}
    for _ in range(args.runs):
        for name, cmd in systems.items():               # alternate, so load drifts hit both alike
            wall, rss, tree, texts[name] = measure(cmd)
            results[name].append((wall, rss, tree))
    print(f"## whole process, {args.clip}, medians of {args.runs} alternating runs "
          f"(load average at the end: {os.getloadavg()[0]:.1f})")
    print(f"{'':28s} {'ours':>10s} {'fw int8':>10s} {'ratio':>7s}")
    for col, label, unit in ((0, "wall", "s"), (1, "peak RSS, largest process", "MiB"), (2, "peak RSS, whole tree", "MiB")):
        a = statistics.median(r[col] for r in results["ours"])
        b = statistics.median(r[col] for r in results["faster-whisper int8"])
        fmt = ".2f" if unit == "s" else ".0f"
        print(f"{label:28s} {a:>8{fmt}} {unit:3s}{b:>7{fmt}} {unit:3s}{a / b:6.2f}x")
    pairs = [o[0] / f[0] for o, f in zip(results["ours"], results["faster-whisper int8"])]
    print(f"pairwise wall ratios: {', '.join(f'{p:.2f}' for p in pairs)}")
    for name, text in texts.items():
        print(f"{name}: {text.splitlines()[-1] if text else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
