"""Which parts of the decoder step change the tokens when quantized: measured on held-out speech only.

    python3 bench/int_sensitivity.py [--work DIR] [--form kv] [--search one|leave-out|none]
                                     [--bits 16] [--recipes SPEC;SPEC...] [--audio a.wav,b.wav]

The speech here is neither a bundled clip (resources/audio, which bench/int_agreement.py reports on) nor the
calibration set: PROBE_SENTENCES, written for this bench and spoken by espeak-ng in voices the calibration
does not use, and any --audio recordings (default: pyannote-audio's two-speaker sample, if present at
PYANNOTE_SAMPLE). A recipe is chosen here, then reported on the bundled clips, never tuned to them.

The encoder is fp32 throughout, so only the step graph differs. The mask is fed clipped to MASK_FLOOR, as
calibrated, whether the recipe leaves the mask input in float or not. Per recipe (device/toolchain/int_quantize.py
`Recipe.parse`: `a16w8`, `float,block3=16`, `a16w8,SOFTMAX=float`, …) and clip, against the fp32 graphs:
- free: greedy decoding with the recipe's step; clips whose tokens equal fp32's, and the first differing steps;
- forced: the recipe's step fed fp32's tokens (its own self cache, written by its own new_k/new_v): the sampled
  steps where its argmax is not fp32's token ("flips"), and the mean KL(fp32 || recipe) of the next-token
  distributions, a continuous measure that ranks recipes that flip nothing.
--search one quantizes one layer group at a time (the rest float); leave-out quantizes all but one.
Calibration inputs (device/toolchain/calibration.py) and quantized graphs are cached in --work.
LiteRT's int16 kernels are reference kernels on this CPU: slow here, which says nothing about the NPU.
"""
from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.fp16_agreement import first_divergence
from device.toolchain.calibration import MASK_FLOOR

PYANNOTE_SAMPLE = Path.home() / ".cache/whisperkv-bench/pyannote-sample/pyannote/audio/sample/sample.wav"
# Written for this bench: neither a bundled clip's text nor a calibration sentence.
PROBE_SENTENCES = {
    "en": ("Please leave the parcel with the neighbour if nobody answers the door.",
           "The river froze early this year, so the ferry stopped running in November."),
    "zh": ("明天早上八点我们在火车站门口见面。",
           "这座桥修了两年，终于在上个月通车了。"),
}
PROBE_VOICES = {"en": ("en-gb-x-rp+f2", "en-029+m4"), "zh": ("cmn-latn-pinyin+f4", "cmn-latn-pinyin+m2")}


class Tap:
    """Passes a backend through, keeping each step's logits and `x`; `cross` (if given) stands for the encoder."""

    def __init__(self, backend, cross=None):
        self._b, self.cross_state, self.logits, self.xs = backend, cross, [], []
        for a in ("name", "dims", "token_embedding", "positional_embedding", "alignment_heads", "cross"):
            setattr(self, a, getattr(backend, a))

    def encode(self, mel):
        if self.cross_state is None:
            self.cross_state = self._b.encode(mel)
        return self.cross_state

    def step(self, *args):
        args = (*args[:5], np.maximum(args[5], MASK_FLOOR))
        out = self._b.step(*args)
        self.xs.append(np.array(args[0], np.float32))
        self.logits.append(np.asarray(out[0], np.float32).ravel())
        return out

    def full(self, *a):
        return self._b.full(*a)


def free(backend, tokenizer, audio, language, cross=None) -> tuple[list[int], Tap]:
    from core.decode.decoding import decode_windows
    from core.decode.options import DecodeOptions
    from core.model.mel import content_frames, mel_windows

    tap = Tap(backend, cross)
    events = decode_windows(tap, tokenizer, mel_windows(audio)[:1], DecodeOptions(language=language),
                            n_frames=min(content_frames(audio), 3000))
    return [e.token for e in events if e.type == "token"], tap


def forced(backend, ref: Tap, n_sampled: int) -> tuple[int, float]:
    """(flips, mean KL) of `backend`'s step fed the reference's inputs `x` with its own self cache."""
    from core.model.kv_cache import KVCache

    d = backend.dims
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    ck, cv = ref.cross_state
    flips, kl = 0, []
    first = len(ref.xs) - n_sampled
    for i, x in enumerate(ref.xs):
        logits, nk, nv = backend.step(x, cache.k, cache.v, ck, cv, np.maximum(cache.mask(), MASK_FLOOR))
        cache.write(nk, nv)
        if i < first:
            continue
        p, q = _log_softmax(ref.logits[i]), _log_softmax(np.asarray(logits, np.float32).ravel())
        flips += int(np.argmax(q) != np.argmax(p))
        kl.append(float(np.sum(np.exp(p) * (p - q))))
    return flips, float(np.mean(kl))


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64) - z.max()
    return z - np.log(np.exp(z).sum())


def probe_clips(extra: list[str]) -> dict[str, tuple[np.ndarray, str]]:
    """{name: (16 kHz audio, language)}: PROBE_SENTENCES in PROBE_VOICES, then the --audio recordings."""
    from core.model.audio import load_audio
    from device.toolchain.calibration import SENTENCES, VOICES, speech

    assert not set(PROBE_VOICES["en"] + PROBE_VOICES["zh"]) & set(VOICES["en"] + VOICES["zh"])
    assert not set(PROBE_SENTENCES["en"] + PROBE_SENTENCES["zh"]) & set(SENTENCES["en"] + SENTENCES["zh"])
    bundled = (ROOT / "resources" / "audio").resolve()
    clips = {f"{u.language} {u.voice} #{(PROBE_SENTENCES[u.language].index(u.text))}": (u.audio, u.language)
             for u in speech(None, PROBE_SENTENCES, PROBE_VOICES)}
    for path in extra:
        p = Path(path).expanduser().resolve()
        if bundled in p.parents:
            sys.exit(f"{p} is a bundled clip: the recipe is chosen on held-out speech only")
        if p.is_file():
            clips[p.name] = (load_audio(p), "en")
    return clips


def calibration(work: Path, weights, form: str):
    from device.toolchain.calibration import samples

    path = work / f"calibration-{form}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    cal = samples(weights, form, log=lambda line: print(line, file=sys.stderr))
    path.write_bytes(pickle.dumps(cal, protocol=5))
    return cal


def quantized_step(work: Path, weights, form: str, spec: str, cal) -> bytes:
    from device.graphs.tflite_graphs import build_decoder_step_tflite
    from device.toolchain.calibration import input_bounds
    from device.toolchain.int_quantize import Recipe, quantize_graph

    if spec == "fp16":      # the float reference point: fp16 weights, as `export --dtype fp16` writes them
        return build_decoder_step_tflite(weights.params, weights.dims, "fp16", cross=form)
    path = work / f"step-{form}-{hashlib.sha1(spec.encode()).hexdigest()[:10]}.tflite"
    if path.is_file():
        return path.read_bytes()
    step = build_decoder_step_tflite(weights.params, weights.dims, cross=form)
    t0 = time.perf_counter()
    q = quantize_graph(step, "decoder_step", Recipe.parse(spec), cal.step, bounds=input_bounds(weights))
    print(f"quantized {spec} in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    path.write_bytes(q)
    return q


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/whisperkv-int-sensitivity", help="calibration and graphs are cached here")
    ap.add_argument("--form", default="kv", choices=("kv", "absorbed"))
    ap.add_argument("--search", default="none", choices=("one", "leave-out", "none"))
    ap.add_argument("--bits", type=int, default=16, help="activation bits of the searched groups (16 or 8)")
    ap.add_argument("--with", dest="extra", default="", help="recipe parts added to every searched recipe, e.g. "
                    "headroom=4")
    ap.add_argument("--recipes", default="a16w8", help="';'-separated recipe specs to measure (before the search)")
    ap.add_argument("--audio", default=str(PYANNOTE_SAMPLE), help="held-out recordings (English), ',' separated")
    args = ap.parse_args(argv)

    from device.graphs.tflite_graphs import build_decoder_step_tflite, build_encoder_tflite
    from device.runner.load import load_model_source
    from device.runner.tflite.tflite_backend import TfliteBackend
    from device.toolchain.int_quantize import group_ops

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    src = load_model_source(None, "numpy", keep_weights=True)
    w, tok = src.weights, src.tokenizer
    p, d = w.params, w.dims
    enc = build_encoder_tflite(p, d, cross=args.form)
    fp32 = TfliteBackend(d, w.sha256, enc, build_decoder_step_tflite(p, d, cross=args.form),
                         p["decoder.token_embedding.weight"], p["decoder.positional_embedding"], cross=args.form)
    clips = probe_clips([a for a in args.audio.split(",") if a])
    ref = {}
    for name, (audio, lang) in clips.items():
        toks, tap = free(fp32, tok, audio, lang)
        ref[name] = (toks, tap)
        print(f"fp32 {name}: {len(toks)} tokens: {tok.decode(toks)!r}", file=sys.stderr, flush=True)
    cal = calibration(work, w, args.form)
    specs = [s for s in args.recipes.split(";") if s]
    groups = list(group_ops(build_decoder_step_tflite(p, d, cross=args.form), "decoder_step"))
    base = {16: "a16w8", 8: "a8w8"}[args.bits]
    extra = f",{args.extra}" if args.extra else ""
    if args.search == "one":
        specs += [f"float,{g}={args.bits}{extra}" for g in groups]
    elif args.search == "leave-out":
        specs += [f"{base},{g}=float{extra}" for g in groups]
    print(f"\n{args.form} step graph; encoder fp32; {len(clips)} held-out clips "
          f"({sum(len(a) for a, _ in clips.values()) / 16000:.0f} s)")
    print(f"{'recipe':<34} {'equal':>6} {'first differing steps':<28} {'flips':>6} {'mean KL':>9} {'step MB':>8} {'s':>5}")
    for spec in specs:
        q = quantized_step(work, w, args.form, spec, cal)
        b = TfliteBackend(d, w.sha256, enc, q, p["decoder.token_embedding.weight"], p["decoder.positional_embedding"],
                          dtype="a16w8", cross=args.form)
        t0, equal, where, flips, kls = time.perf_counter(), 0, [], 0, []
        for name, (audio, lang) in clips.items():
            toks, tap = ref[name]
            got, _ = free(b, tok, audio, lang, tap.cross_state)
            dv = first_divergence(toks, got)
            equal += dv is None
            where += [] if dv is None else [str(dv)]
            f, kl = forced(b, tap, len(toks))
            flips, kls = flips + f, kls + [kl]
        print(f"{spec:<34} {equal:>3}/{len(clips):<2} {','.join(where) or '-':<28} {flips:>6} {np.mean(kls):9.2e} "
              f"{len(q) / 1e6:8.1f} {time.perf_counter() - t0:5.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
