"""An hour of real speech through `whisperkv transcribe` on the local runner, in text and --json modes.

    apt-get install asterisk-core-sounds-en-wav asterisk-core-sounds-en    # the recordings and their texts
    python bench/long_audio.py [--minutes 60] [--wav /tmp/hour.wav] [--modes text json]

The hour: Debian's asterisk-core-sounds-en-wav (Allison Smith's voice-menu prompts, CC-BY-SA-3.0; 25 min of
speech in 568 files, 8 kHz) in file-name order, each followed by a pause of 0.4-1.6 s of low noise, repeated in a
new order each round until the hour is full (about 2.4 rounds), then the bundled LibriVox sentence read once at
the end. Prompts whose text in core-sounds-en.txt is a bracketed description ("[ascending tones]") are left out.

Each mode runs `python -m cli transcribe HOUR --language en [--json]` as a new process and samples, every 0.2 s,
the peak resident memory (VmHWM) of the CLI and of its runner. It prints the exit code, the wall time, both
peaks, the WER against the joined prompt texts, and the coverage: the share of the reference's words that the
transcript's aligned words hit (jiwer), and how far into the hour the last transcribed word's reference lies.
Nothing here fails on a time.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SOUNDS = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
TEXTS = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
SAMPLE_RATE = 16000


def prompts() -> list[tuple[Path, str]]:
    """(wav, text) of every spoken prompt the two packages hold."""
    if not SOUNDS.is_dir() or not TEXTS.is_file():
        sys.exit("install the recordings: apt-get install asterisk-core-sounds-en-wav asterisk-core-sounds-en")
    texts = {}
    for line in gzip.open(TEXTS, "rt", encoding="utf-8", errors="replace"):
        name, sep, text = line.partition(": ")
        if sep and not line.startswith(";") and not text.strip().startswith("["):
            texts[name.strip()] = text.strip()
    return sorted((p, texts[p.stem]) for p in SOUNDS.rglob("*.wav") if p.stem in texts)


def build_hour(path: Path, minutes: float) -> str:
    """Write the hour to `path` (16 kHz mono PCM16) and return its reference text."""
    import librosa
    import soundfile as sf

    rng = np.random.default_rng(0)
    items = prompts()
    audio = {p: librosa.resample(sf.read(p, dtype="float32")[0], orig_sr=8000, target_sr=SAMPLE_RATE)
             for p, _ in items}
    librivox = ROOT / "resources" / "audio" / "en_librivox_sense_sensibility_0870.wav"
    tail_audio = librosa.load(librivox, sr=SAMPLE_RATE)[0]
    tail_text = json.loads((librivox.parent / "transcripts.json").read_text())[librivox.name]["reference"]
    budget = int(minutes * 60 * SAMPLE_RATE) - len(tail_audio)
    pieces, refs, n, order = [], [], 0, list(range(len(items)))
    while True:
        for i in order:
            p, text = items[i]
            pause = (rng.normal(0, 0.002, int(rng.uniform(0.4, 1.6) * SAMPLE_RATE))).astype(np.float32)
            if n + len(audio[p]) + len(pause) > budget:
                pieces.append(np.zeros(budget - n, np.float32))
                pieces.append(tail_audio)
                sf.write(path, np.concatenate(pieces), SAMPLE_RATE, subtype="PCM_16")
                return " ".join(refs + [tail_text])
            pieces += [audio[p], pause]
            refs.append(text)
            n += len(audio[p]) + len(pause)
        order = list(rng.permutation(len(items)))


def peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def run(wav: Path, mode: str) -> dict:
    cmd = [sys.executable, "-m", "cli", "transcribe", str(wav), "--language", "en"] + (["--json"] if mode == "json"
                                                                                        else [])
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peaks = {"cli": 0, "runner": 0}
    out_parts: list[str] = []
    reader = threading.Thread(target=lambda: out_parts.append(proc.stdout.read()), daemon=True)
    reader.start()
    while proc.poll() is None:
        peaks["cli"] = max(peaks["cli"], peak_kib(proc.pid))
        for c in children(proc.pid):
            peaks["runner"] = max(peaks["runner"], peak_kib(c))
        time.sleep(0.2)
    reader.join()
    wall = time.perf_counter() - t0
    out, err = "".join(out_parts), proc.stderr.read()
    text = json.loads(out)["text"] if mode == "json" and proc.returncode == 0 else out
    return {"mode": mode, "rc": proc.returncode, "wall_s": round(wall, 1), "cli_mib": peaks["cli"] // 1024,
            "runner_mib": peaks["runner"] // 1024, "text": text, "stderr_tail": err.strip().splitlines()[-1:]}


def coverage(reference: str, text: str) -> tuple[float, float, float]:
    """(WER, share of reference words hit, share of the reference up to its last hit word)."""
    import jiwer

    from core.qa.scoring import normalize

    ref, hyp = normalize(reference), normalize(text)
    out = jiwer.process_words(ref, hyp)
    last = max((c.ref_end_idx for c in out.alignments[0] if c.type in ("equal", "substitute")), default=0)
    n = len(ref.split())
    return out.wer, out.hits / n, last / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--wav", type=Path, default=Path("/tmp/hour.wav"))
    ap.add_argument("--modes", nargs="+", default=["text", "json"], choices=["text", "json"])
    args = ap.parse_args()
    reference = build_hour(args.wav, args.minutes)
    print(f"{args.wav}: {args.minutes:.0f} min, {len(reference.split())} reference words; "
          f"{platform.processor() or platform.machine()}, load {os.getloadavg()[0]:.1f}")
    print("| mode | exit | wall s | CLI peak MiB | runner peak MiB | WER | words hit | reaches |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in args.modes:
        r = run(args.wav, mode)
        wer, hit, reach = coverage(reference, r["text"]) if r["text"] else (1.0, 0.0, 0.0)
        print(f"| {mode} | {r['rc']} | {r['wall_s']} | {r['cli_mib']} | {r['runner_mib']} | {wer:.3f} | "
              f"{hit:.1%} | {reach:.1%} |  {' '.join(r['stderr_tail'])[:160]}", flush=True)


if __name__ == "__main__":
    main()
