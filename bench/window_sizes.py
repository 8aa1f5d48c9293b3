"""Encoder windows sized to the audio (issue 55), side by side in one run: encoder ms per window length, and whether a
shorter window decodes the 30 s window's tokens, for the two ways the fixed-shape decoder step can take its cross state.

    python bench/window_sizes.py [--parts encoders,steps,tokens] [--backends onnx,native-int8b]
                                 [--timed onnx,onnx-int8b] [--rounds 5] [--floor 10] [--margin 2] [--no-fw] [--no-synth]

- Encoder ms: the median of --rounds calls per backend and length (built and warmed first; rounds alternate the
  systems, so a busy machine slows all alike), and CTranslate2's int8 30 s encoder on the same weights
  (faster-whisper's, 2 threads) when it is installed. native-int8b's encoder is onnx-int8b's.
- Per token: the decoder step's ms per window length (the step attends to the window's positions alone), and the
  cross state the runner holds for it (`cross_bytes`), on test_zh.wav with EOT suppressed.
- Tokens: every bundled clip's first window and speech synthesised here with espeak-ng (sentences written for this
  bench, none a bundled clip's), greedy, the language detected as `transcribe` does. For each length that holds the
  clip, each way's tokens against the 30 s window's on the same backend, and whether the decode ended at EOT:
  pad: the window's cross K/V zero-padded to 1500 positions (a step of fixed shapes, unchanged);
  mask: the step attends to the window's positions only (whisper.cpp's audio_ctx), as the backends' own steps read
  a shorter window (core/model/backend.py, WindowBackend): what an additive −10000 mask over the padding of a step
  of fixed shapes computes, exp(−10000) being 0 in fp32 and fp16.
  `*` marks the length the rule picks: the smallest holding the audio plus --margin, never under --floor.
Never asserts anything; prints the figures and the machine's load average beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.decoding import decode_window  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.model.audio import SAMPLE_RATE, load_audio  # noqa: E402
from core.model.backend import encode_sized  # noqa: E402
from core.model.dims import FULL_WINDOW_S, WINDOWS_S  # noqa: E402
from core.model.mel import N_FRAMES, mel_windows, total_frames  # noqa: E402
from core.model.tokenizer import WhisperTokenizer  # noqa: E402
from core.model.weights import load_model  # noqa: E402
from core.qa.scoring import error_rate  # noqa: E402
from device.runner.backends import make_backend  # noqa: E402

AUDIO = ROOT / "resources" / "audio"
# (name, espeak-ng voice, words a minute, text): lengths spread over the windows, some ending within 2 s of one.
SYNTH = [
    ("s_en_bakery", "en-us", 150, "The bakery on the corner sells fresh bread every morning before seven."),
    ("s_en_train", "en-gb+f3", 135, "Our train was delayed by forty minutes because a tree had fallen across the "
                                    "line near the old bridge, so we missed the meeting."),
    ("s_en_train_slow", "en-us", 122, "Our train was delayed by forty minutes because a tree had fallen across "
                                      "the line near the old bridge, so we missed the meeting."),
    ("s_en_museum", "en-us", 150, "When the museum reopens next spring, visitors will be able to see the restored "
                                  "paintings in the east wing, along with a small exhibition about the people who "
                                  "repaired them over the last three years."),
    ("s_en_museum_slow", "en-gb-scotland+m3", 118, "When the museum reopens next spring, visitors will be able to "
                                                   "see the restored paintings in the east wing, along with a small "
                                                   "exhibition about the people who repaired them over the last "
                                                   "three years."),
    ("s_en_lab", "en-us", 150, "Please remember to switch off the lights in the laboratory, close every window on "
                               "the second floor, and return the spare keys to the front desk before you leave the "
                               "building tonight. The cleaning staff will arrive early tomorrow, and they need to "
                               "get into every room without waiting for anyone to open the doors for them."),
    ("s_en_lab_fast", "en-gb+f3", 165, "Please remember to switch off the lights in the laboratory, close every "
                                       "window on the second floor, and return the spare keys to the front desk "
                                       "before you leave the building tonight. The cleaning staff will arrive early "
                                       "tomorrow, and they need to get into every room without waiting for anyone "
                                       "to open the doors for them."),
    ("s_zh_noodles", "cmn-latn-pinyin+f3", 140, "我们家楼下新开了一家面馆，味道很好，价格也不贵。"),
    ("s_zh_noodles_slow", "cmn-latn-pinyin+f3", 112, "我们家楼下新开了一家面馆，味道很好，价格也不贵。"),
    ("s_zh_rain", "cmn-latn-pinyin+f3", 140, "这个周末可能会下大雨，出门的时候记得带伞。"),
]


def clips(synth: bool) -> list[tuple[str, np.ndarray, str, str]]:
    """(name, audio, language, reference text): the bundled clips, then the synthesised speech."""
    refs = json.loads((AUDIO / "transcripts.json").read_text())
    out = [(p.name, load_audio(p), refs[p.name]["language"], refs[p.name]["reference"])
           for p in sorted(AUDIO.glob("*.wav"))]
    if synth:
        from device.toolchain.calibration import say  # espeak-ng: only when synthesised speech is asked for

        out += [(name, say(text, voice, rate), "zh" if voice.startswith("cmn") else "en", text)
                for name, voice, rate, text in SYNTH]
    return out


def rule(duration_s: float, floor: float, margin: float) -> int:
    """The smallest length that holds the audio plus the margin, never under the floor (30 s at most)."""
    need = max(floor, duration_s + margin)
    return next((w for w in WINDOWS_S if w >= need), FULL_WINDOW_S)


class Sized:
    """`backend` fed a `window_s` window's cross state the `way` said: mask (the window's positions, which the
    backend's own step attends to alone) or pad (zero-padded to 1500 positions, as a step of fixed shapes without a
    mask would read them)."""

    def __init__(self, backend, window_s: int, way: str):
        self.inner, self.window_s, self.way = backend, window_s, way
        for name in ("name", "dims", "token_embedding", "positional_embedding", "cache_layout", "cross", "step"):
            setattr(self, name, getattr(backend, name))

    def encode(self, mel):
        cross = encode_sized(self.inner, mel, self.window_s)
        return cross if self.way == "mask" else tuple(pad(t, self.dims.n_audio_ctx) for t in cross)

    def full(self, *args):
        raise NotImplementedError("the bench decodes with the cache")


def pad(t: np.ndarray, n_audio_ctx: int) -> np.ndarray:
    """Cross K/V zero-padded to the step's 1500 positions (axis 2, either layout)."""
    return np.pad(t, ((0, 0), (0, 0), (0, n_audio_ctx - t.shape[2]), (0, 0)))


def decode(backend, tokenizer, mel, n_frames: int) -> tuple[list[int], str, str]:
    events = list(decode_window(backend, tokenizer, mel, DecodeOptions(language=None), segment_frames=n_frames))
    done = events[-1]
    return list(done.tokens), done.reason, done.text


def ct2_encoder():
    """CTranslate2's int8 encoder on the same weights (faster-whisper's model), or None when not installed."""
    try:
        import ctranslate2

        from bench.fw import load
    except ImportError:
        return None
    model = load("int8", 2)
    return lambda mel: model.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(mel, np.float32)))


def encoder_ms(systems: dict, mel: np.ndarray, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in systems}
    for f in systems.values():
        f(mel)                                     # builds a window's encoder, warms its session
    for _ in range(rounds):
        for key, f in systems.items():
            t = time.perf_counter()
            f(mel)
            times[key].append((time.perf_counter() - t) * 1000)
    return {k: statistics.median(v) for k, v in times.items()}


def step_costs(backends: dict, tokenizer, rounds: int) -> None:
    """Per-token ms and the cross state held, per window length: test_zh's first window (4.2 s, held by every
    length), 48 tokens with EOT suppressed so every length decodes as many, lengths alternating over the rounds."""
    mel = mel_windows(load_audio(AUDIO / "test_zh.wav"))[0]
    print(f"\nper token (median ms of 48 steps, the median over {rounds} rounds) and cross state held, test_zh.wav, "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, backend in backends.items():
        ms: dict[int, list[float]] = {w: [] for w in WINDOWS_S}
        fastest: dict[int, float] = {}
        held = {}
        for _ in range(rounds):
            for w in WINDOWS_S:
                options = DecodeOptions(language="zh", suppress_eot=True, max_tokens=48, window_s=w)
                events = list(decode_window(backend, tokenizer, mel, options, segment_frames=420))
                held[w] = events[0].cross_bytes
                steps = [e.ms for e in events[2:] if e.type == "token"]
                ms[w].append(statistics.median(steps))
                fastest[w] = min(fastest.get(w, float("inf")), *steps)
        med = {w: statistics.median(v) for w, v in ms.items()}
        # The fastest step too: on a loaded machine the C step's OpenMP team waits for a core, and its median with it.
        print("  " + f"{name:<13} " + " | ".join(
            f"{w} s {med[w]:5.1f} ms ({med[w] / med[FULL_WINDOW_S]:4.2f}x), fastest {fastest[w]:4.1f} "
            f"({fastest[w] / fastest[FULL_WINDOW_S]:4.2f}x), {held[w] / 1e6:4.1f} MB" for w in WINDOWS_S))


def cpu() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")


def agreement(args, backends: dict, tokenizer) -> None:
    """Each clip on each backend: the 30 s window, then every shorter length that holds it, both ways."""
    print(f"\ntokens against the 30 s window's (same / DIFFER; eot or the stop reason; the error rate against the "
          f"reference text), floor {args.floor:g} s, margin {args.margin:g} s; * the rule's length")
    tally: dict = {}
    for clip, audio, language, reference in clips(not args.no_synth):
        dur = len(audio) / SAMPLE_RATE
        mel, n_frames = mel_windows(audio)[0], min(total_frames(len(audio)), N_FRAMES)
        pick, kind = rule(dur, args.floor, args.margin), "synth" if clip.startswith("s_") else "bundled"
        for name in args.backends.split(","):
            ref, reason, text = decode(backends[name], tokenizer, mel, n_frames)
            err30 = error_rate(reference, text, language)
            cells, differ = [], []
            for w in [w for w in WINDOWS_S[:-1] if w >= dur]:
                for way in ("pad", "mask"):
                    toks, why, got = decode(Sized(backends[name], w, way), tokenizer, mel, n_frames)
                    same, err = toks == ref, error_rate(reference, got, language)
                    differ += [] if same else [f"{w} {way}: {got[:240]!r}"]
                    scopes = ["every length"] + ["the rule's"] * (w == pick)
                    for scope in scopes if reason == "eot" else ():       # a 30 s window that failed: not counted
                        t = tally.setdefault((name, way, kind, scope), [0, 0, 0, 0.0, 0.0])
                        for i, x in enumerate((same, 1, why == "eot", err, err30)):
                            t[i] += x
                    cells.append(f"{w}{'*' if w == pick else ''} {way} {'same' if same else 'DIFFER'} "
                                 f"{'eot' if why == 'eot' else why} {err:.2f}")
            print(f"  {clip:<40} {dur:5.1f} s {name:<13} 30: {reason:<4} {len(ref):3d} tok {err30:.2f} | "
                  + (" | ".join(cells) or "(no shorter window holds it)"), flush=True)
            for line in [f"30 s: {text[:240]!r}"] * bool(differ) + differ:
                print(f"      {line}")
    print("\nper backend, way and clips (those whose 30 s window ends at EOT): same tokens / windows tried, EOT "
          "reached, mean error rate against the 30 s window's on the same clips")
    for (name, way, kind, scope), (same, n, eot, err, err30) in sorted(tally.items()):
        print(f"  {name:<13} {way:<4} {kind:<8} {scope:<13} {same:2d}/{n:<2d} same, {eot:2d}/{n:<2d} eot, "
              f"error {err / n:.3f} against {err30 / n:.3f}")


def encoders(backends: dict, args) -> None:
    mel_en = mel_windows(load_audio(AUDIO / "test_en.wav"))[0][None]
    systems = {f"{n} {w} s": (lambda m, b=backends[n], w=w: b.encode_window(m, w))
               for n in args.timed.split(",") if n for w in WINDOWS_S}
    ct2 = None if args.no_fw else ct2_encoder()
    if ct2 is not None:
        systems["CTranslate2 int8 30 s"] = ct2
    ms = encoder_ms(systems, mel_en, args.rounds)
    base = ms.get("CTranslate2 int8 30 s")
    print(f"\nencoder ms (median of {args.rounds}, test_en.wav), load average {os.getloadavg()[0]:.1f}")
    for key, value in ms.items():
        own30 = ms.get(key.rsplit(" ", 2)[0] + f" {FULL_WINDOW_S} s", value)
        ratio = f"  {value / base:5.2f}x CT2 int8 30 s" if base else ""
        print(f"  {key:<24} {value:8.0f}  {value / own30:5.2f}x its 30 s{ratio}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="onnx,native-int8b", help="backends whose steps and tokens are measured")
    ap.add_argument("--parts", default="encoders,steps,tokens", help="which figures, of encoders, steps, tokens")
    ap.add_argument("--timed", default="onnx,onnx-int8b", help="backends whose encoders are timed")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--floor", type=float, default=10.0, help="the rule's floor, seconds")
    ap.add_argument("--margin", type=float, default=2.0, help="the rule's margin, seconds")
    ap.add_argument("--no-fw", action="store_true", help="skip CTranslate2's encoder")
    ap.add_argument("--no-synth", action="store_true", help="the bundled clips only")
    args = ap.parse_args(argv)
    print(f"CPU: {cpu()}, {os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.1f}", flush=True)
    weights = load_model(None)
    tokenizer = WhisperTokenizer.from_weights(weights)
    names = list(dict.fromkeys(args.backends.split(",") + args.timed.split(",")))
    backends = {name: make_backend(name, weights) for name in names if name}
    parts = args.parts.split(",")
    if "encoders" in parts:
        encoders(backends, args)
    chosen = {n: backends[n] for n in args.backends.split(",") if n}
    if "steps" in parts:
        step_costs(chosen, tokenizer, args.rounds)
    if "tokens" in parts:
        agreement(args, chosen, tokenizer)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
