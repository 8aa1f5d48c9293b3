"""What the integer TFLite graphs do to the tokens: every bundled clip, against the fp32 TFLite graphs.

    python3 bench/int_agreement.py [--work DIR] [--dtypes a16w8,a8w8,mixed] [--forms kv,absorbed]
                                   [--clips a.wav,b.wav]

Exports (or reuses, from --work) `whisperkv export --format tflite --dtype D --cross F` bundles, calibrated
on espeak-ng speech (device/toolchain/calibration.py), never on these clips. Per clip and bundle, decoded
greedily in this process (LiteRT on this CPU; its int16 kernels are reference kernels, slow here, which says
nothing about the NPU): tokens equal to fp32 or the first differing step (0-based, sampled tokens), the
WER/CER against the clip's reference transcript, and the logits' agreement over the steps both decodes
share (mean cosine, and the worst step's). Then sizes on disk and the ops each graph keeps in float.

Where token changes come from, and which recipe keeps them away, is measured on held-out speech by
bench/int_sensitivity.py, never on these clips.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.decode import AUDIO, CLIPS  # noqa: E402
from bench.fp16_agreement import first_divergence  # noqa: E402


class _Logits:
    """Passes a backend through, keeping each step's logits."""

    def __init__(self, backend):
        self._b, self.logits = backend, []
        for a in ("name", "dims", "token_embedding", "positional_embedding", "alignment_heads", "cross"):
            setattr(self, a, getattr(backend, a))

    def encode(self, mel):
        return self._b.encode(mel)

    def step(self, *args):
        out = self._b.step(*args)
        self.logits.append(np.asarray(out[0], np.float32).ravel())
        return out

    def full(self, *a):
        return self._b.full(*a)


def run(backend, tokenizer, audio) -> tuple[list[int], list[np.ndarray], float]:
    from core.decode.decoding import decode_windows
    from core.decode.options import DecodeOptions
    from core.model.mel import content_frames, mel_windows

    b, t0 = _Logits(backend), time.perf_counter()
    events = decode_windows(b, tokenizer, mel_windows(audio), DecodeOptions(), n_frames=content_frames(audio))
    return [e.token for e in events if e.type == "token"], b.logits, time.perf_counter() - t0


def agreement(a: list[np.ndarray], b: list[np.ndarray], shared: int) -> tuple[float, float]:
    """(mean, worst) cosine of the logits over the first `shared` steps (the SOT prefix's steps included)."""
    cos = [float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y))) for x, y in zip(a[:shared], b[:shared])]
    return (float(np.mean(cos)), float(np.min(cos))) if cos else (float("nan"), float("nan"))


def bundle(work: Path, weights, dtype: str, form: str) -> Path:
    from device.runner.bundle import read_bundle
    from device.toolchain.export import export_bundle

    path = work / f"{dtype}-{form}"
    try:
        if read_bundle(path).dtype == dtype and read_bundle(path).cross == form:
            return path
    except Exception:
        pass
    t0 = time.perf_counter()
    export_bundle(weights, path, dtype, ("tflite",), form, log=lambda line: print(line, file=sys.stderr))
    print(f"exported {path} in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default=str(ROOT / ".bench-int"), help="where the bundles are exported and reused")
    ap.add_argument("--dtypes", default="a16w8,a8w8,mixed")
    ap.add_argument("--forms", default="kv,absorbed")
    ap.add_argument("--clips", default=",".join(CLIPS))
    args = ap.parse_args(argv)

    from core.model.audio import load_audio
    from core.qa.scoring import error_rate
    from device.runner.load import load_model_source
    from device.runner.tflite.tflite_backend import TfliteBackend
    from device.toolchain.int_quantize import float_ops

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    src = load_model_source(None, "numpy", keep_weights=True)
    w, tok = src.weights, src.tokenizer
    truth = json.loads((AUDIO / "transcripts.json").read_text())
    clips, forms = args.clips.split(","), args.forms.split(",")
    ref: dict = {}
    for form in forms:
        fp32 = TfliteBackend.from_weights(w, cross=form)
        for c in clips:
            audio = load_audio(AUDIO / c)
            toks, logits, sec = run(fp32, tok, audio)
            ref[(form, c)] = {"tokens": toks, "logits": logits, "audio": audio, "seconds": sec}
    def err(c, toks):
        t = truth[c]
        return error_rate(t["reference"], tok.decode(toks), t["language"])

    print(f"{'clip':<40} {'form':<9} {'dtype':<6} {'tokens':>6}  {'vs fp32':<22} {'WER/CER':>8} {'fp32':>6} "
          f"{'cos mean':>9} {'cos min':>8} {'s':>6}")
    summary = {}
    for form in forms:
        for c in clips:
            r = ref[(form, c)]
            print(f"{c:<40} {form:<9} {'fp32':<6} {len(r['tokens']):>6}  {'-':<22} {err(c, r['tokens']):8.3f} "
                  f"{'':>6} {'':>9} {'':>8} {r['seconds']:6.1f}", flush=True)
        for dtype in args.dtypes.split(","):
            path = bundle(work, w, dtype, form)
            b = TfliteBackend.from_bundle(path)
            s = summary.setdefault((form, dtype), {"equal": 0, "err": [], "fp32_err": [], "path": path})
            for c in clips:
                r = ref[(form, c)]
                toks, logits, sec = run(b, tok, r["audio"])
                dv = first_divergence(r["tokens"], toks)
                shared = len(r["logits"]) if dv is None else len(r["logits"]) - len(r["tokens"]) + dv + 1
                mean, worst = agreement(r["logits"], logits, shared)
                e, e32 = err(c, toks), err(c, r["tokens"])
                s["equal"] += dv is None
                s["err"].append(e)
                s["fp32_err"].append(e32)
                verdict = "equal" if dv is None else f"differ at step {dv}"
                print(f"{c:<40} {form:<9} {dtype:<6} {len(toks):>6}  {verdict:<22} {e:8.3f} {e32:6.3f} "
                      f"{mean:9.5f} {worst:8.5f} {sec:6.1f}", flush=True)
    print(f"\n{'form':<9} {'dtype':<6} {'equal':>6} {'mean WER/CER':>13} {'fp32':>6} {'encoder MB':>11} "
          f"{'step MB':>8}  ops left in float")
    for (form, dtype), s in summary.items():
        enc, step = (s["path"] / "encoder.tflite").read_bytes(), (s["path"] / "decoder_step.tflite").read_bytes()
        left = {k: v for g in (enc, step) for k, v in float_ops(g).items()}
        print(f"{form:<9} {dtype:<6} {s['equal']:>3}/{len(clips):<2} {np.mean(s['err']):13.3f} "
              f"{np.mean(s['fp32_err']):6.3f} {len(enc) / 1e6:11.1f} {len(step) / 1e6:8.1f}  {left or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
