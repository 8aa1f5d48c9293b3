"""The PC's side of the doctor's comparisons: the NumPy reference (core/model/whisper.py) on the installed weights
the bundle was exported from, loaded once per process, and the clips decoded on it and on the board alike."""
from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from core.decode.window_feed import decode_source
from core.model.audio import load_audio
from core.model.mel import mel_windows
from core.model.mel_file import MelSource
from device import ROOT
from device.doctor.checkup import CannotRun
from device.runner.load import load_model_source
from device.runner.serve.probe import probe

AUDIO = ROOT / "resources" / "audio"
NUMBERS_CLIP = AUDIO / "test_en.wav"
CLIPS = (AUDIO / "test_en.wav", AUDIO / "test_zh.wav")
QUICK_CLIPS = (AUDIO / "en_asterisk_hello-world.wav",)


@lru_cache(maxsize=2)
def reference(cross: str = "kv"):
    """The installed weights on the NumPy backend (device.runner.load.LoadedModel)."""
    return load_model_source(None, "numpy", cross=cross)


def check_same_model(bundle_sha: str | None, cross: str = "kv"):
    """The reference, refusing a bundle exported from other weights than the installed ones."""
    ref = reference(cross)
    if bundle_sha and bundle_sha != ref.sha256:
        raise CannotRun(f"the bundle was exported from model {bundle_sha[:12]}…, this PC's weights are "
                             f"{ref.sha256[:12]}…: there is no reference to compare it with",
                             "install the weights the bundle was exported from, or export it from these")
    return ref


@lru_cache(maxsize=4)
def reference_probe(cross: str = "kv", graphs: str | None = None) -> dict:
    """The probe of NUMBERS_CLIP's first window on the reference, or on the TFLite graphs of the bundle at `graphs`
    in LiteRT (an integer bundle's own), once per process."""
    model = load_model_source(graphs, "tflite") if graphs else reference(cross)
    return probe(model.backend, model.tokenizer.special.sot, first_window())


def first_window(path: Path = NUMBERS_CLIP) -> np.ndarray:
    return np.ascontiguousarray(mel_windows(load_audio(path))[:1], np.float32)


def run_clip(path: Path, decode_one) -> dict:
    """A clip through the one seek loop: its tokens, text, language, and each window's encoder and step times."""
    tokens, texts, enc_ms, steps, language = [], [], [], [], ""
    t0 = time.perf_counter()
    for ev in decode_source(MelSource.of_file(path), DecodeOptions(), decode_one):
        if isinstance(ev, EncodedEvent):
            enc_ms.append(ev.ms)
            language = language or ev.language
        elif isinstance(ev, TokenEvent):
            steps.append((ev.window, ev.step, ev.ms))
        elif isinstance(ev, DoneEvent):
            tokens += list(ev.tokens)
            texts.append(ev.text)
    return {"clip": path.name, "tokens": tokens, "text": "".join(texts).strip(), "language": language,
            "encoder_ms": enc_ms, "steps": steps, "wall_s": round(time.perf_counter() - t0, 3)}


@lru_cache(maxsize=8)
def run_reference(path: Path, cross: str = "kv") -> dict:
    """The clip on the reference, once per process (a caller must not change what it returns)."""
    ref = reference(cross)
    return run_clip(path, lambda mel, options, n_frames: ref.transcribe(mel, options, n_frames=n_frames))


def first_difference(board: list[int], pc: list[int]) -> int | None:
    """The first step where the two token lists part, None when they are equal."""
    if board == pc:
        return None
    return next((i for i, (a, b) in enumerate(zip(board, pc)) if a != b), min(len(board), len(pc)))
