"""What each arithmetic alone moves the doctor's numbers and tokens by: the measure behind `BOUNDS`
(device/doctor/numbers.py, docs/doctor.md "The bounds").

    python bench/doctor_bounds.py [--synth N]

For every bundled clip and N utterances espeak-ng speaks (the integer calibration's sentences and voices), each
arithmetic's backend against the fp32 NumPy reference on the same installed weights:
- `fp16`: the fp16 reference (core/model/fp16_reference.py): fp16 weights, every op's output rounded to fp16,
  fp32 accumulation, as the MDLA computes a graph compiled with `--relax-fp32`;
- `int8-host`: native-int8b (where this CPU runs it) and onnx-int8b.
Per arithmetic: the lowest cosine of the doctor's probe (the first window's cross K and V, sampled, and the first
step's logits), and the highest WER (CER for Chinese) of the whole transcript. No figure here is a board's.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.decode import AUDIO, CLIPS  # noqa: E402
from core.decode.decoding import decode_windows  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.fp16_reference import Fp16Reference  # noqa: E402
from core.model.mel import content_frames, mel_windows  # noqa: E402
from core.qa.scoring import error_rate, uses_cer  # noqa: E402
from device.doctor.numbers import compare  # noqa: E402
from device.runner.backends import REGISTRY  # noqa: E402
from device.runner.load import load_model_source  # noqa: E402
from device.runner.serve.probe import probe  # noqa: E402


def utterances(synth: int) -> list[tuple[str, str, object]]:
    import json

    from device.toolchain.calibration import speech

    langs = json.loads((AUDIO / "transcripts.json").read_text())
    out = [(name, (langs.get(name) or {}).get("language", "en"), load_audio(AUDIO / name)) for name in CLIPS]
    out += [(f"espeak {u.voice}: {u.text[:24]}…", u.language, u.audio) for u in speech(limit=synth)]
    return out


def run(backend, tokenizer, language: str, audio) -> tuple[dict, str]:
    mels = mel_windows(audio)
    events = decode_windows(backend, tokenizer, mels, DecodeOptions(language=language), n_frames=content_frames(audio))
    text = tokenizer.decode([e.token for e in events if e.type == "token"])
    return probe(backend, tokenizer.special.sot, mels[:1]), text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synth", type=int, default=6, help="espeak-ng utterances beside the bundled clips")
    args = ap.parse_args()
    ref = load_model_source(None, "numpy", keep_weights=True)
    kinds = {"fp16": [Fp16Reference(ref.weights)]}
    kinds["int8-host"] = [load_model_source(None, name).backend for name in ("native-int8b", "onnx-int8b")
                          if REGISTRY[name].missing() is None]
    worst = {k: {"cosine": 1.0, "rate": 0.0, "where": ""} for k in kinds}
    for name, lang, audio in utterances(args.synth):
        want_probe, want_text = run(ref.backend, ref.tokenizer, lang, audio)
        for kind, backends in kinds.items():
            for b in backends:
                got_probe, got_text = run(b, ref.tokenizer, lang, audio)
                rows, _ = compare(got_probe, want_probe, "fp32", floor=0.0)
                cos = min(r["cosine"] for r in rows)
                rate = error_rate(want_text, got_text, lang)
                print(f"{kind:9} {b.name:12} {name[:40]:40} lowest cosine {cos:.7f}  "
                      f"{'CER' if uses_cer(lang) else 'WER'} {rate:.3f}", flush=True)
                w = worst[kind]
                w["cosine"], w["rate"] = min(w["cosine"], cos), max(w["rate"], rate)
    for kind, w in worst.items():
        floor = 1 - 10 * (1 - w["cosine"])
        print(f"{kind}: lowest cosine {w['cosine']:.7f} (10x its distance: a floor of {floor:.5f}), highest error "
              f"rate {w['rate']:.3f}")


if __name__ == "__main__":
    main()
