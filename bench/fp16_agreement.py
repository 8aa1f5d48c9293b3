"""What fp16 does to the tokens: every bundled clip, fp32 TFLite against two fp16 forms.

    python bench/fp16_agreement.py

- `tflite fp16 weights`: the exported `--dtype fp16` TFLite graphs (fp16 constants + DEQUANTIZE), run by
  LiteRT on this CPU: the weights are fp16, the arithmetic fp32.
- `onnx fp16`: every tensor and every op in fp16 (ONNX Runtime, CPU). This is the closer stand-in for
  the MDLA with `ncc-tflite --relax-fp32`, which computes in fp16 throughout; no board was attached,
  so the board's own figure is not measured here.
Per clip: tokens equal or not, and the first step (0-based, sampled tokens) where they diverge.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.decode import AUDIO, CLIPS  # noqa: E402
from core.decode.decoding import decode_windows  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.mel import content_frames, mel_windows  # noqa: E402


def tokens(backend, tokenizer, audio) -> list[int]:
    events = decode_windows(backend, tokenizer, mel_windows(audio), DecodeOptions(), n_frames=content_frames(audio))
    return [e.token for e in events if e.type == "token"]


def first_divergence(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def main() -> int:
    from device.graphs.tflite_graphs import build_decoder_step_tflite, build_encoder_tflite
    from device.runner.backends import make_backend
    from device.runner.load import load_model_source
    from device.runner.tflite.tflite_backend import TfliteBackend

    ref = load_model_source(None, "numpy", keep_weights=True)
    w, p = ref.weights, ref.weights.params
    fp32 = TfliteBackend.from_weights(w)
    fp16w = TfliteBackend(w.dims, w.sha256, build_encoder_tflite(p, w.dims, "fp16"),
                          build_decoder_step_tflite(p, w.dims, "fp16"), p["decoder.token_embedding.weight"],
                          p["decoder.positional_embedding"], dtype="fp16")
    fp16 = make_backend("onnx-fp16", w)
    others = {"tflite fp16 weights": fp16w, "onnx fp16": fp16}
    print(f"{'clip':<40} {'fp32 tokens':>11}  " + "  ".join(f"{n + ' (equal / first diff)':<36}" for n in others))
    agree = {n: 0 for n in others}
    for clip in CLIPS:
        audio = load_audio(AUDIO / clip)
        base = tokens(fp32, ref.tokenizer, audio)
        cells = []
        for name, backend in others.items():
            got = tokens(backend, ref.tokenizer, audio)
            d = first_divergence(base, got)
            agree[name] += d is None
            cells.append(f"{'equal' if d is None else f'differ at step {d} ({len(got)} tokens)':<36}")
        print(f"{clip:<40} {len(base):>11}  " + "  ".join(cells), flush=True)
    print("\n" + ", ".join(f"{n}: {k}/{len(CLIPS)} clips token-identical to fp32" for n, k in agree.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
