"""Decode speed in one process, side by side: our backends vs faster-whisper on the same weights.

    python bench/decode.py [--backends onnx,onnx-int8] [--clips test_en.wav,...] [--steps 100]

Per clip: encoder ms, and decode ms per token of the natural (greedy, until EOT) transcript.
Per backend, on --long-clip: a forced long decode (EOT suppressed) cached and uncached, the
per-token ms around step --steps, and their ratio. faster-whisper (CTranslate2 int8 and float32,
greedy, 2 threads) runs on the same mel: its encoder, its natural decode, and its per-token ms
over a forced decode of the same length. Model loads are excluded; rounds alternate systems so
a busy machine slows all of them alike. Our sessions are configured as a one-shot `whisperkv transcribe`
runs them: worker threads spin within a run (--no-spin: as the studio and a live stream run them).
Never asserts a time.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.decoding import decode_windows  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.backend import Backend  # noqa: E402
from core.model.dims import ModelDims  # noqa: E402
from core.model.mel import mel_windows  # noqa: E402
from core.model.tokenizer import WhisperTokenizer  # noqa: E402

CLIPS = ["test_en.wav", "test_zh.wav", "en_arctic_slt_a0009.wav", "en_librivox_sense_sensibility_0870.wav",
         "en_asterisk_hello-world.wav", "en_asterisk_demo-congrats.wav"]
AUDIO = ROOT / "resources" / "audio"


@dataclass
class Natural:
    encoder_ms: float
    decode_ms: float      # decode time of the window (SOT prefix, every token, EOT), encoder excluded
    tokens: int           # steps taken, EOT included
    text: str
    language: str = ""

    @property
    def per_token(self) -> float:
        return self.decode_ms / max(self.tokens, 1)


def ours_natural(backend: Backend, tokenizer: WhisperTokenizer, mel: np.ndarray) -> Natural:
    """First 30 s window only, so every system does the same work."""
    events = list(decode_windows(backend, tokenizer, mel[:1], DecodeOptions(language=None)))
    enc = next(e for e in events if e.type == "encoded")
    done = next(e for e in events if e.type == "done")
    n = sum(1 for e in events if e.type == "token")
    return Natural(enc.ms, done.ms_total - enc.ms, n, done.text, enc.language)


def ours_long(backend: Backend, tokenizer: WhisperTokenizer, mel: np.ndarray, language: str, steps: int,
              cache: bool) -> float:
    """Median per-token ms over steps [steps-5, steps+5] of a decode with EOT suppressed."""
    opts = DecodeOptions(language=language, cache=cache, suppress_eot=True, max_tokens=steps + 6)
    ms = [e.ms for e in decode_windows(backend, tokenizer, mel[:1], opts) if e.type == "token"]
    return float(np.median(ms[steps - 5:steps + 6]))


class FasterWhisper:
    def __init__(self, compute_type: str, threads: int):
        from bench.fw import load

        self.name = f"faster-whisper {compute_type}"
        self.model = load(compute_type, threads)

    def _encode(self, mel):
        import ctranslate2

        return self.model.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(mel[:1], np.float32)),
                                       to_cpu=False)

    def prompt(self, enc, language: str | None):
        tok = self.model.hf_tokenizer
        if language is None:
            language = self.model.model.detect_language(enc)[0][0][0][2:-2]
        return [tok.token_to_id(t) for t in ("<|startoftranscript|>", f"<|{language}|>", "<|transcribe|>",
                                            "<|notimestamps|>")]

    def natural(self, mel) -> Natural:
        """faster-whisper's own steps for one window: encode, detect the language, greedy decode."""
        t0 = time.perf_counter()
        enc = self._encode(mel)
        enc_ms = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        prompt = self.prompt(enc, None)
        r = self.model.model.generate(enc, [prompt], beam_size=1, max_length=ModelDims.n_text_ctx, suppress_blank=True,
                                      suppress_tokens=[-1])[0]
        dec_ms = (time.perf_counter() - t0) * 1e3
        return Natural(enc_ms, dec_ms, len(r.sequences_ids[0]) + 1,
                       self.model.hf_tokenizer.decode(r.sequences_ids[0]),
                       self.model.hf_tokenizer.id_to_token(prompt[1])[2:-2])

    def long(self, mel, language: str, steps: int) -> float:
        """ms per generated token between step 10 and step `steps`+10 with EOT suppressed."""
        enc = self._encode(mel)
        prompt = self.prompt(enc, language)
        eot = self.model.hf_tokenizer.token_to_id("<|endoftext|>")
        runs = []
        for n in (10, steps + 10):
            t0 = time.perf_counter()
            # CTranslate2 returns max_length/2 tokens here; count what it produced rather than trust the bound.
            r = self.model.model.generate(enc, [prompt], beam_size=1, max_length=2 * n, suppress_blank=False,
                                          suppress_tokens=[-1, eot])[0]
            runs.append(((time.perf_counter() - t0) * 1e3, len(r.sequences_ids[0])))
        (t_a, n_a), (t_b, n_b) = runs
        return (t_b - t_a) / max(n_b - n_a, 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="native-int8b,onnx-int8b,onnx,onnx-int8",
                    help="comma-separated: native-int8b, onnx-int8b, onnx, onnx-int8, onnx-fp16, numpy, tflite")
    ap.add_argument("--clips", default=",".join(CLIPS))
    ap.add_argument("--long-clip", default="test_en.wav", help="clip for the forced long decode")
    ap.add_argument("--steps", type=int, default=100, help="measure the long decode around this step")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds; the best round is kept")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-fw", action="store_true", help="skip faster-whisper")
    ap.add_argument("--no-spin", action="store_true",
                    help="worker threads sleep between nodes, native-int8b's soon after a step (the studio's setting)")
    ap.add_argument("--only-long", action="store_true", help="skip the natural decodes")
    args = ap.parse_args(argv)

    from device.runner.backends import make_backend
    from device.runner.load import load_model_source
    from device.spec.runtime_config import RuntimeConfig

    reference = load_model_source(None, "numpy", keep_weights=True)
    tokenizer = reference.tokenizer
    systems = {}
    for name in args.backends.split(","):
        if name.startswith(("onnx", "native")):     # built here for the --threads setting
            # native-int8b: its encoder, uncached reference and prefill are onnx-int8b's sessions
            systems[name] = make_backend(name, reference.weights,
                                         config=RuntimeConfig(threads=args.threads, spin=not args.no_spin))
        elif name == "numpy":
            systems[name] = reference.backend
        elif name == "tflite":          # XNNPACK on this CPU; its uncached reference re-runs the step graph
            from device.runner.tflite.tflite_backend import TfliteBackend

            systems[name] = TfliteBackend.from_weights(reference.weights, threads=args.threads)
        else:
            raise SystemExit(f"unknown backend {name!r}")
    if not args.no_fw:
        for ct in ("int8", "float32"):
            fw = FasterWhisper(ct, args.threads)
            systems[fw.name] = fw
    clips = [] if args.only_long else args.clips.split(",")
    mels = {c: mel_windows(load_audio(AUDIO / c)) for c in {*clips, args.long_clip}}

    best: dict[tuple[str, str], Natural] = {}
    for r in range(args.rounds):
        for clip in clips:
            for name, s in systems.items():
                res = s.natural(mels[clip]) if isinstance(s, FasterWhisper) else ours_natural(s, tokenizer, mels[clip])
                key = (name, clip)
                if key not in best or res.encoder_ms + res.decode_ms < best[key].encoder_ms + best[key].decode_ms:
                    best[key] = res
            print(f"round {r + 1}: {clip} done", file=sys.stderr, flush=True)

    print("## natural decode (first 30 s window, greedy, model load excluded; best of", args.rounds, "rounds)")
    print(f"{'clip':<40} {'system':<22} {'enc ms':>8} {'ms/tok':>7} {'tokens':>6}  text")
    for clip in clips:
        for name in systems:
            n = best[(name, clip)]
            print(f"{clip:<40} {name:<22} {n.encoder_ms:8.0f} {n.per_token:7.1f} {n.tokens:6d}  {n.text[:50]!r}")
    if not args.no_fw and clips:
        print("\n## ratios vs faster-whisper int8 (< 1: we are faster)")
        print(f"{'clip':<40} {'system':<14} {'encoder':>8} {'ms/tok':>7} {'enc+dec':>8}")
        for clip in clips:
            ref = best[("faster-whisper int8", clip)]
            for name in systems:
                if name.startswith("faster"):
                    continue
                n = best[(name, clip)]
                print(f"{clip:<40} {name:<14} {n.encoder_ms / ref.encoder_ms:8.2f} {n.per_token / ref.per_token:7.2f} "
                      f"{(n.encoder_ms + n.decode_ms) / (ref.encoder_ms + ref.decode_ms):8.2f}")

    first = next(iter(systems.values()))
    if isinstance(first, FasterWhisper):
        language = first.natural(mels[args.long_clip]).language
    else:
        language = ours_natural(first, tokenizer, mels[args.long_clip]).language
    print(f"\n## forced long decode of {args.long_clip} ({language}, EOT suppressed), ms per token around step "
          f"{args.steps} (best of {args.rounds})")
    mel = mels[args.long_clip]
    cached: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(args.rounds):          # systems alternate within each round
        for name, s in systems.items():
            cached[name].append(s.long(mel, language, args.steps) if isinstance(s, FasterWhisper)
                                else ours_long(s, tokenizer, mel, language, args.steps, True))
    # tflite's uncached reference replays the step graph from an empty cache: O(n^2) step calls, minutes.
    long = {name: (min(v), None if isinstance(systems[name], FasterWhisper) or name == "tflite"
                   else ours_long(systems[name], tokenizer, mel, language, args.steps, False))
            for name, v in cached.items()}
    ref = long.get("faster-whisper int8", (None,))[0]
    print(f"{'system':<22} {'cached':>8} {'uncached':>9} {'uncached/cached':>16} {'cached vs fw int8':>18}")
    for name, (c, u) in long.items():
        ratio = f"{u / c:15.1f}x" if u else f"{'-':>16}"
        vs = f"{c / ref:18.2f}" if ref else f"{'-':>18}"
        print(f"{name:<22} {c:8.1f} {u if u else float('nan'):9.1f} {ratio} {vs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
