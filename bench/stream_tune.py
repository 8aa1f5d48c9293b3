"""Choosing AlignAtt's margin and pass interval, and the encoder windows' floor and margin, on speech that no
reported figure uses: ten sentences spoken by espeak-ng (Debian: apt-get install espeak-ng), joined with 0.5 s gaps,
in one voice or several.

    python bench/stream_tune.py [--margins 4,7,10,15,20,25] [--chunks 0.5,1.0] [--window-floors 10,30]
                                [--window-margins 1,2,4] [--voices en-us:165,en-gb+f3:150] [--realtime] [--out FILE]

Per voice and (margin, chunk, window floor, window margin): the stream fed as fast as possible (or in real time with
`--realtime`) through one local runner; its WER against the sentences, its WER against an offline transcription of
the same audio and the share of committed words that disagree with it, its commit lag and passes. With several
voices, a last line per setting pools them: offline words the stream got wrong over all offline words. Without
`--realtime` the lag leaves out compute (the stream clock is the audio fed): it shows what the margin itself costs.
The bundled clips and the pyannote sample (what docs/benchmarks.md reports on) are never fed here.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stream import GAP_S, cpu_name
from bench.stream_policies import offline
from core.model.audio import SAMPLE_RATE, load_audio
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from core.qa.scoring import error_rate, normalize
from core.stream.against_offline import against_offline
from core.stream.feed import blocks_of, realtime_blocks
from core.stream.one_pass import warm_up
from core.stream.policy import StreamConfig
from core.stream.session import StreamSession
from device.link.client import BoardClient
from device.link.decoder import RunnerDecoder
from device.link.local import LocalTransport
from device.link.target import parse_target

SENTENCES = [
    "The harbour was quiet that morning, and the fishing boats had not yet returned from the open sea.",
    "Please remember to water the tomato plants before you leave for the weekend.",
    "The committee will meet again on Thursday to review the budget for the new library.",
    "She opened the window, listened to the rain for a while, and then went back to her book.",
    "Our train was delayed by forty minutes because of a signal failure near the bridge.",
    "If the weather improves, we could walk along the river and have lunch in the old market.",
    "He repaired the bicycle himself, although it took him most of the afternoon.",
    "The museum has extended its opening hours during the summer holidays.",
    "Turn left at the second crossing, and you will see the post office on your right.",
    "Nobody expected the small team to finish the project a full week ahead of schedule.",
]


def synthesized(voice: str = "en-us", words_per_minute: int = 165) -> np.ndarray:
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(SENTENCES):
            path = Path(tmp) / f"{i}.wav"
            subprocess.run(["espeak-ng", "-v", voice, "-s", str(words_per_minute), "-w", str(path), text],
                           check=True)
            parts += [load_audio(path), np.zeros(int(GAP_S * SAMPLE_RATE), np.float32)]
    return np.concatenate(parts[:-1])


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--margins", default="4,7,10,15,20,25", help="encoder frames (20 ms)")
    ap.add_argument("--chunks", default="0.5", help="seconds of new audio between passes")
    ap.add_argument("--window-floors", default="10", help="seconds: each pass's encoder window is never shorter "
                    "(30: Whisper's whole window every pass)")
    ap.add_argument("--window-margins", default="2", help="seconds a pass's window holds beyond its buffer")
    ap.add_argument("--voices", default="en-us:165", help="espeak-ng voices and words per minute, VOICE:WPM,...")
    ap.add_argument("--realtime", action="store_true", help="feed at 1x (lag includes compute)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    reference = " ".join(SENTENCES)
    tokenizer = WhisperTokenizer.from_file(find_tokenizer())
    grid = [(chunk, margin, floor, window_margin) for chunk in floats(args.chunks)
            for margin in [int(m) for m in args.margins.split(",")] for floor in floats(args.window_floors)
            for window_margin in floats(args.window_margins)]
    rows, pooled = [], {}
    with BoardClient(LocalTransport(), runner_args=parse_target("local", workload="serve").runner_args()) as client:
        warm_up(RunnerDecoder(client).window, "en", client.info.windows)
        for voice, wpm in (v.rsplit(":", 1) for v in args.voices.split(",")):
            audio = synthesized(voice, int(wpm))
            off = offline(client, audio)
            words = len(normalize(off.text).split())
            print(f"{voice} at {wpm} wpm: {len(audio) / SAMPLE_RATE:.1f} s synthesized; offline WER "
                  f"{error_rate(reference, off.text):.3f}", flush=True)
            for chunk, margin, floor, window_margin in grid:
                config = StreamConfig(language="en", policy="alignatt",
                                      params={"margin_frames": margin, "min_chunk_s": chunk, "window_floor_s": floor,
                                              "window_margin_s": window_margin})
                session = StreamSession(RunnerDecoder(client).window, tokenizer, config,
                                        windows=client.info.windows)
                blocks = realtime_blocks(audio) if args.realtime else blocks_of(audio)
                doc = session.run(blocks, live=args.realtime, warm=False)    # warmed once, at the runner's start
                row = {"voice": f"{voice}:{wpm}", "margin": margin, "chunk": chunk, "window_floor_s": floor,
                       "window_margin_s": window_margin, "windows": sorted({p["window_s"] for p in doc["passes"]}),
                       "wer": round(error_rate(reference, doc["text"]), 4),
                       **against_offline(off.text, doc["text"]), "lag_s": doc["lag_s"],
                       "passes": len(doc["passes"]), "compute_per_audio_s": doc["compute_per_audio_s"]}
                rows.append(row)
                print(json.dumps(row), flush=True)
                errors, total = pooled.get((chunk, margin, floor, window_margin), (0.0, 0))
                pooled[(chunk, margin, floor, window_margin)] = (errors + row["wer_vs_offline"] * words, total + words)
    if "," in args.voices:
        for (chunk, margin, floor, window_margin), (errors, total) in pooled.items():
            print(f"pooled: margin {margin}, chunk {chunk:g} s, window floor {floor:g} s / margin {window_margin:g} s: "
                  f"WER vs offline {errors / total:.4f} ({round(errors)} of {total} words)")
    print("cpu:", cpu_name())
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
