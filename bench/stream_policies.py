"""The streaming policies side by side in one run, on the same recordings, through one local runner in real time.

    python bench/stream_policies.py [--policies alignatt,local-agreement] [--window-floors 10,30] [--long-minutes 4]
                                    [--out FILE]

Recordings:
1. the join of the bundled English clips (at least 60 s, 0.5 s gaps; bench/stream.py builds it), against their
   references;
2. that join looped to `--long-minutes` (bench/stream.py::looped), to see whether the lag grows (median per minute);
3. the 30 s two-speaker sample the pyannote-audio wheel ships (pyannote/audio/sample/sample.wav, its sample.stm
   the reference), taken from `pip download --no-deps pyannote.audio==4.0.7` into ~/.cache/whisperkv-bench
   (nothing is installed, torch neither), or from `--pyannote-wheel`;
4. silence and white noise (30 s each, fed as fast as possible): they must commit nothing.
With `--fast` the recordings are fed as fast as possible too: the stream clock is then the audio fed, and the
lag is what the commit rule and the pass interval cost by themselves (add one pass's wall time for a listener).

Each policy runs once per window floor (`--window-floors`, the stream's `--window-floor`): 10 or 20 (the stream's
default), each pass in the smallest encoder window its buffer fits, never under the floor; 30, every pass in
Whisper's whole window.

For each recording an offline transcription through the same runner (one request per 30 s window, as
`whisperkv transcribe`, with word timings: its first word is where "first visible" counts from, for every
policy alike), then each policy with its own defaults, one after the other. Figures per run: WER against the
reference (and offline's), WER against offline and the share of committed words disagreeing with it
(core/stream/against_offline.py), first visible (tentative, committed), commit lag p50/p90/p95, end of file
(core/stream/latency.py), compute per audio second, skips, and the load average before and after.
Nothing fails on a time; it prints a table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stream import cpu_name, english_clips, joined, lag_by_minute, looped
from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from core.decode.window_feed import decode_source
from core.model.audio import SAMPLE_RATE, load_audio
from core.model.mel_file import MelSource
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from core.qa.scoring import error_rate
from core.stream.against_offline import against_offline
from core.stream.feed import blocks_of, realtime_blocks
from core.stream.one_pass import warm_up
from core.stream.policies import POLICIES
from core.stream.policy import StreamConfig
from core.stream.session import StreamSession
from device.link.client import BoardClient
from device.link.decoder import RunnerDecoder
from device.link.local import LocalTransport
from device.link.target import parse_target

PYANNOTE = "pyannote.audio==4.0.7"
CACHE = Path.home() / ".cache" / "whisperkv-bench"


def pyannote_sample(wheel: str | None) -> tuple[np.ndarray, str]:
    """The two-speaker sample and its reference (the STM's lines in time order)."""
    if wheel is None:
        found = sorted(CACHE.glob("pyannote_audio-*.whl"))
        if not found:
            CACHE.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", PYANNOTE, "-d", str(CACHE)],
                           check=True)
            found = sorted(CACHE.glob("pyannote_audio-*.whl"))
        wheel = str(found[-1])
    out = CACHE / "pyannote-sample"
    with zipfile.ZipFile(wheel) as z:
        for name in ("sample.wav", "sample.stm"):
            z.extract(f"pyannote/audio/sample/{name}", out)
    stm = (out / "pyannote/audio/sample/sample.stm").read_text().splitlines()
    rows = sorted((float(ln.split()[3]), " ".join(ln.split()[5:])) for ln in stm if ln.strip())
    return load_audio(out / "pyannote/audio/sample/sample.wav"), " ".join(text for _, text in rows)


def offline(client: BoardClient, audio: np.ndarray) -> Transcript:
    result = Transcript()
    for ev in decode_source(MelSource.of_audio(audio), DecodeOptions(language="en", word_timestamps=True),
                            RunnerDecoder(client).window):
        result.add(ev)
    return result


def live(client, tokenizer, audio: np.ndarray, config: StreamConfig, speech_start_s: float, fast: bool = False) -> dict:
    """The stream in real time; `fast`: as fast as possible, the clock the audio fed (the lag leaves out compute)."""
    load = os.getloadavg()[0]
    session = StreamSession(RunnerDecoder(client).window, tokenizer, config, windows=client.info.windows)
    blocks = blocks_of(audio) if fast else realtime_blocks(audio)
    session.run(blocks, live=not fast, warm=False)      # the runner warmed up once, at its start
    doc = session.summary(speech_start_s)
    doc.update(events=session.events, text_final=session.policy.text, load=(round(load, 2), round(os.getloadavg()[0], 2)))
    return doc


def run_label(policy: str, floor: float, n_floors: int) -> str:
    if n_floors == 1:
        return policy
    return f"{policy} · {'30 s windows' if floor >= 30 else f'sized windows (floor {floor:g} s)'}"


def figures(doc: dict, reference: str, off: Transcript, off_wer: float) -> dict:
    return {"wer": round(error_rate(reference, doc["text"]), 4), "offline_wer": round(off_wer, 4),
            **against_offline(off.text, doc["text"]), "first_visible_s": doc["first_visible_s"],
            "lag_s": doc["lag_s"], "end_of_file_s": doc["end_of_file_s"],
            "compute_per_audio_s": doc["compute_per_audio_s"], "passes": len(doc["passes"]),
            "skipped": len(doc["skipped"]), "load": doc["load"],
            "windows": sorted({p["window_s"] for p in doc["passes"]})}


def table(results: dict) -> str:
    head = ("| recording | policy | WER (offline) | vs offline: WER / committed disagreeing | first visible "
            "tentative / committed (s) | commit lag p50 / p90 / p95 (s) | end of file (s) | compute per audio s | "
            "skips | load |")
    lines = [head, "|" + "---|" * 10]
    for rec, by_policy in results.items():
        for name, f in by_policy.items():
            fv, lag = f["first_visible_s"], f["lag_s"]
            lines.append(f"| {rec} | {name} | {f['wer']:.3f} ({f['offline_wer']:.3f}) | {f['wer_vs_offline']:.3f} / "
                         f"{(f['committed_disagreeing'] or 0) * 100:.1f} % | {fv['tentative']} / {fv['committed']} | "
                         f"{lag['median']} / {lag['p90']} / {lag['p95']} | {f['end_of_file_s']} | "
                         f"{f['compute_per_audio_s']} | {f['skipped']} | {f['load'][0]}–{f['load'][1]} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default=",".join(POLICIES), help="comma-separated, run in this order per recording")
    ap.add_argument("--long-minutes", type=float, default=4.0, help="length of the looped stream (0: skip it)")
    ap.add_argument("--pyannote-wheel", default=None, help="a pyannote.audio wheel already downloaded")
    ap.add_argument("--backend", default="auto", help="the runner's backend")
    ap.add_argument("--fast", action="store_true", help="feed as fast as possible: the lag is the policy's own, "
                    "without compute (what the commit rule costs on any machine)")
    ap.add_argument("--window-floors", default="10,30", help="comma-separated --window-floor values, each policy "
                    "runs once per value (30: the whole window every pass)")
    ap.add_argument("--language", default="auto", help="the streams' language: auto (detected on the first speech, as "
                    "`whisperkv stream` does by default), en, ...")
    ap.add_argument("--out", default=None, help="write every figure as JSON here")
    args = ap.parse_args()
    floors = [float(f) for f in args.window_floors.split(",") if f.strip()]
    runs = {run_label(n.strip(), f, len(floors)): StreamConfig(language=args.language, policy=n.strip(),
                                                               params={"window_floor_s": f})
            for n in args.policies.split(",") if n.strip() for f in floors}
    tokenizer = WhisperTokenizer.from_file(find_tokenizer())
    clips = english_clips()
    recordings = {"English clips joined": joined(clips)}
    if args.long_minutes > 0:
        recordings[f"{args.long_minutes:g}-minute stream"] = looped(clips, args.long_minutes * 60)
    recordings["pyannote two speakers"] = pyannote_sample(args.pyannote_wheel)
    report: dict = {"cpu": cpu_name(), "results": {}, "by_minute": {}, "quiet": {}}
    runner_args = parse_target("local", backend=args.backend, workload="serve").runner_args()
    with BoardClient(LocalTransport(), runner_args=runner_args) as client:
        report["backend"] = client.info.backend
        warm_up(RunnerDecoder(client).window, "en", client.info.windows)
        for rec, (audio, reference) in recordings.items():
            label = f"{rec} ({len(audio) / SAMPLE_RATE:.1f} s)"
            off = offline(client, audio)
            off_wer = error_rate(reference, off.text)
            start = off.words[0]["start"] if off.words else None
            report["results"][label] = {}
            for name, config in runs.items():
                doc = live(client, tokenizer, audio, config, start, args.fast)
                report["results"][label][name] = figures(doc, reference, off, off_wer)
                if "minute" in rec:
                    report["by_minute"][name] = [m["commit_lag_s"]["median"] for m in lag_by_minute(doc["events"])]
                print(label, name, json.dumps(report["results"][label][name]), flush=True)
        rng = np.random.default_rng(0)
        quiet = {"silence": np.zeros(30 * SAMPLE_RATE, np.float32),
                 "white noise -30 dBFS": (rng.standard_normal(30 * SAMPLE_RATE) * 10 ** (-30 / 20)).astype(np.float32),
                 "white noise -15 dBFS": (rng.standard_normal(30 * SAMPLE_RATE) * 10 ** (-15 / 20)).astype(np.float32)}
        for sound_name, sound in quiet.items():
            for name, config in runs.items():
                doc = StreamSession(RunnerDecoder(client).window, tokenizer, config,
                                    windows=client.info.windows).run(blocks_of(sound), live=False)
                report["quiet"][f"{sound_name} · {name}"] = {"commits": len(doc["commits"]),
                                                              "passes": len(doc["passes"])}
    print(table(report["results"]))
    print("median commit lag by minute:", json.dumps(report["by_minute"]))
    print("silence and noise:", json.dumps(report["quiet"]))
    print("cpu:", report["cpu"], "· backend:", report["backend"])
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
