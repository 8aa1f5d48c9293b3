"""Live transcription: commit lag, compute per second of audio, and WER against offline `transcribe`.

    python bench/stream.py [--backend auto|onnx-int8] [--long-minutes 4] [--min-chunk 1.0] [--prompt-chars 100] [--trim 8] [--out stream.json]

Everything goes through one local runner (`--device local`, the default backend), fed in real time:
1. a recording of at least 60 s made by joining the bundled English clips (resources/audio/transcripts.json,
   language en) with 0.5 s gaps, cycling through them until 60 s are reached; its WER against the joined
   references, next to the WER of an offline transcription of the same recording (as `whisperkv transcribe`
   does it: one request per 30 s window) through the same runner;
2. that recording looped to `--long-minutes`, to show whether the lag grows (median lag per minute): its clips
   repeated while whole ones fit, then silence to the full length, scored against those clips' references;
3. silence and noise alone, fed as fast as possible: they must commit nothing.

Lag = emitted_s - end_s: the stream clock (seconds of audio fed so far) when text was committed, minus
where that text ends in the audio. Per commit (as `whisperkv stream --json` lists them) and per word (each
word of a commit, which is what whisper_streaming's paper reports). Compute = the runner's encoder plus
decoder ms over all passes, per second of audio. Nothing here fails on a time; it prints the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.options import DecodeOptions  # noqa: E402
from core.decode.transcript import Transcript  # noqa: E402
from core.decode.window_feed import decode_source  # noqa: E402
from core.model.audio import SAMPLE_RATE, load_audio  # noqa: E402
from core.model.mel_file import MelSource  # noqa: E402
from core.model.tokenizer import WhisperTokenizer  # noqa: E402
from core.model.weights import find_tokenizer  # noqa: E402
from core.qa.scoring import error_rate  # noqa: E402
from core.stream.events import Committed  # noqa: E402
from core.stream.feed import blocks_of, realtime_blocks  # noqa: E402
from core.stream.one_pass import warm_up  # noqa: E402
from core.stream.policy import StreamConfig  # noqa: E402
from core.stream.session import StreamSession  # noqa: E402
from core.stream.stats import percentiles, word_lags  # noqa: E402
from device.link.client import BoardClient  # noqa: E402
from device.link.decoder import RunnerDecoder  # noqa: E402
from device.link.local import LocalTransport  # noqa: E402
from device.link.target import parse_target  # noqa: E402

AUDIO = ROOT / "resources" / "audio"
GAP_S = 0.5


Clip = tuple[np.ndarray, str]     # 16 kHz audio, its reference


def english_clips(min_s: float = 60.0) -> list[Clip]:
    """The bundled English clips in order, cycling until they span `min_s` seconds joined by 0.5 s gaps."""
    refs = json.loads((AUDIO / "transcripts.json").read_text())
    clips = [(load_audio(AUDIO / name), r["reference"]) for name, r in refs.items() if r["language"] == "en"]
    out: list[Clip] = []
    while sum(len(a) for a, _ in out) + GAP_S * SAMPLE_RATE * len(out) < min_s * SAMPLE_RATE:
        out.append(clips[len(out) % len(clips)])
    return out


def joined(clips: list[Clip]) -> tuple[np.ndarray, str]:
    """The clips joined with 0.5 s gaps, and their references joined."""
    gap = np.zeros(int(GAP_S * SAMPLE_RATE), np.float32)
    parts = [p for audio, _ in clips for p in (audio, gap)]
    return np.concatenate(parts[:-1]), " ".join(text for _, text in clips)


def joined_english(min_s: float = 60.0) -> tuple[np.ndarray, str]:
    """The English clips joined with 0.5 s gaps, cycling until `min_s` seconds; and the joined references."""
    return joined(english_clips(min_s))


def looped(clips: list[Clip], seconds: float) -> tuple[np.ndarray, str]:
    """`clips` repeated (0.5 s gaps, between repetitions too) for exactly `seconds`: only the clips that fit
    whole, then silence to the end, so the reference (theirs, joined) is what the audio says."""
    fit: list[Clip] = []
    used = -GAP_S * SAMPLE_RATE
    while used + GAP_S * SAMPLE_RATE + len(clips[len(fit) % len(clips)][0]) <= seconds * SAMPLE_RATE:
        fit.append(clips[len(fit) % len(clips)])
        used += GAP_S * SAMPLE_RATE + len(fit[-1][0])
    audio, reference = joined(fit) if fit else (np.zeros(0, np.float32), "")
    return np.concatenate([audio, np.zeros(int(seconds * SAMPLE_RATE) - len(audio), np.float32)]), reference


def offline(client: BoardClient, audio: np.ndarray) -> str:
    """`whisperkv transcribe` on the same recording: one request per 30 s window."""
    result = Transcript()
    for ev in decode_source(MelSource.of_audio(audio), DecodeOptions(language="en"), RunnerDecoder(client).window):
        result.add(ev)
    return result.text


def live(client, tokenizer, audio: np.ndarray, config: StreamConfig) -> dict:
    t0 = time.monotonic()
    session = StreamSession(RunnerDecoder(client).window, tokenizer, config, windows=client.info.windows)
    doc = session.run(realtime_blocks(audio), live=True, warm=False)   # the runner warmed up once, before offline
    doc["wall_s"] = round(time.monotonic() - t0, 1)
    doc["events"] = session.events
    doc["text_final"] = session.policy.text
    return doc


def fast(client, tokenizer, audio: np.ndarray, config: StreamConfig) -> dict:
    session = StreamSession(RunnerDecoder(client).window, tokenizer, config, windows=client.info.windows)
    return session.run(blocks_of(audio), live=False)


def lag_by_minute(events) -> list[dict]:
    commits = [e for e in events if isinstance(e, Committed)]
    out = []
    for minute in range(int(max((c.emitted_s for c in commits), default=0) // 60) + 1):
        inside = [c for c in commits if minute * 60 <= c.emitted_s < (minute + 1) * 60]
        out.append({"minute": minute + 1, "commit_lag_s": percentiles([c.lag_s for c in inside]),
                    "word_lag_s": percentiles(word_lags(inside))})
    return out


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name"))
    except Exception:
        return platform.processor() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--long-minutes", type=float, default=4.0, help="length of the looped stream (0: skip it)")
    ap.add_argument("--min-chunk", type=float, default=1.0)
    ap.add_argument("--prompt-chars", type=int, default=100)
    ap.add_argument("--trim", type=float, default=8.0, help="cut the buffer at a committed sentence past this")
    ap.add_argument("--backend", default="auto", help="the runner's backend (auto = native-int8b where it runs, else onnx; onnx-int8b, ...)")
    ap.add_argument("--out", default=None, help="write every figure as JSON here")
    args = ap.parse_args()
    config = StreamConfig(language="en", params={"min_chunk_s": args.min_chunk}, prompt_chars=args.prompt_chars,
                          trim_s=args.trim, word_cut_s=max(args.trim, 20.0))
    tokenizer = WhisperTokenizer.from_file(find_tokenizer())
    clips = english_clips()
    audio, reference = joined(clips)
    report: dict = {"cpu": cpu_name(), "load_before": os.getloadavg(), "audio_s": round(len(audio) / SAMPLE_RATE, 2),
                    "config": vars(args)}
    # as `whisperkv stream` starts its local runner
    runner_args = parse_target("local", backend=args.backend, workload="serve").runner_args()
    with BoardClient(LocalTransport(), runner_args=runner_args) as client:
        report["backend"] = client.info.backend
        warm_up(RunnerDecoder(client).window, "en")
        off_text = offline(client, audio)
        report["offline_wer"] = round(error_rate(reference, off_text), 4)
        report["offline_text"] = off_text
        one = live(client, tokenizer, audio, config)
        report["stream"] = {k: v for k, v in one.items() if k not in ("events", "commits", "passes")}
        report["stream"]["wer"] = round(error_rate(reference, one["text"]), 4)
        report["stream"]["passes"] = len(one["passes"])
        report["stream"]["commits"] = len(one["commits"])
        print(f"{report['audio_s']} s joined recording: offline WER {report['offline_wer']:.3f}, stream WER "
              f"{report['stream']['wer']:.3f}; lag per commit {one['lag_s']}, per word {one['word_lag_s']}; compute "
              f"{one['compute_per_audio_s']} s per audio s; {len(one['skipped'])} skips; wall {one['wall_s']} s",
              flush=True)
        if args.long_minutes > 0:
            # The recording looped, only whole clips, so the reference is what was fed (silence to the end).
            loop_audio, loop_reference = looped(clips, args.long_minutes * 60)
            long = live(client, tokenizer, loop_audio, config)
            report["long"] = {"audio_s": long["audio_s"], "lag_s": long["lag_s"], "word_lag_s": long["word_lag_s"],
                              "compute_per_audio_s": long["compute_per_audio_s"], "skipped": len(long["skipped"]),
                              "trimmed": long["trimmed"], "by_minute": lag_by_minute(long["events"]),
                              "wer": round(error_rate(loop_reference, long["text"]), 4)}
            print(f"{long['audio_s']} s looped: {json.dumps(report['long']['by_minute'])}; compute "
                  f"{long['compute_per_audio_s']}; {len(long['skipped'])} skips", flush=True)
        rng = np.random.default_rng(0)
        quiet = {"silence 30 s": np.zeros(30 * SAMPLE_RATE, np.float32),
                 "white noise -30 dBFS 30 s": (rng.standard_normal(30 * SAMPLE_RATE) * 10 ** (-30 / 20)).astype(np.float32),
                 "white noise -15 dBFS 30 s": (rng.standard_normal(30 * SAMPLE_RATE) * 10 ** (-15 / 20)).astype(np.float32)}
        report["quiet"] = {}
        for name, sound in quiet.items():
            doc = fast(client, tokenizer, sound, config)
            report["quiet"][name] = {"commits": len(doc["commits"]), "passes": len(doc["passes"]), "text": doc["text"]}
            print(f"{name}: {len(doc['commits'])} commits, {len(doc['passes'])} passes", flush=True)
    report["load_after"] = os.getloadavg()
    print(json.dumps({k: v for k, v in report.items()}, indent=1, default=str))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
