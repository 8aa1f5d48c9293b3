"""Calibration data for the integer TFLite graphs: speech synthesized with espeak-ng, never a bundled clip.

`speech()` speaks a few sentences in English and Mandarin, each in several espeak-ng voices (the set
below: 2 English and 2 Mandarin sentences, 3 voices each, 12 utterances of 4–7 s, about 65 s). `samples()` runs
them through the fp32 TFLite graphs and records what each graph is fed: the encoder's mel, and the
decoder step's inputs at every step of the SOT prefix and at `text_steps` steps of the text of a greedy
decode, so the step is calibrated on the cross state and cache contents it will really see. Every prefix step
counts: the language and task tokens drive activations no text token reaches (left out, a16w8's step clipped its
MLP at the language token and its logits there came out 72 % off).

The additive mask's −1e9 would stretch an integer range over nothing but the mask: the step's
samples carry it clipped to MASK_FLOOR, and the runner's −1e9 saturates to the same value when it is
quantized (exp(−32) ≈ 1e−14: a masked slot still takes no attention).
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.decode.decoding import decode_window
from core.decode.options import DecodeOptions
from core.errors import ModelError
from core.model.audio import load_audio
from core.model.mel import mel_windows
from core.model.tokenizer import WhisperTokenizer
from device.runner.tflite.tflite_backend import TfliteBackend

MASK_FLOOR = -32.0
ESPEAK = "espeak-ng"
ESPEAK_FIX = "install Debian's espeak-ng (apt-get install espeak-ng): it speaks the calibration sentences"

# Sentences written for calibration only; none is (or paraphrases) a bundled clip's transcript.
SENTENCES = {
    "en": ("The weather station on the hill recorded heavy rain for most of the afternoon.",
           "Seven engineers tested the new battery in a cold room for three weeks."),
    "zh": ("今天下午图书馆会提前关门，请大家注意时间。",
           "这家工厂去年生产了三百万台洗衣机。"),
}
# espeak-ng's plain `cmn` voice reads Chinese characters as digits and Latin letters (whisper hears
# "1.1.4.5..."); `cmn-latn-pinyin` speaks them as Mandarin syllables.
VOICES = {"en": ("en-us", "en-gb+f3", "en-gb-scotland+m3"),
          "zh": ("cmn-latn-pinyin", "cmn-latn-pinyin+f3", "cmn-latn-pinyin+m7")}
PREFIX_STEPS = 4        # <|startoftranscript|><|lang|><|transcribe|><|notimestamps|>


@dataclass
class Utterance:
    language: str
    voice: str
    text: str
    audio: np.ndarray          # 16 kHz mono float32


@dataclass
class Samples:
    """What each graph is fed, as calibration inputs keyed by its input names."""

    encoder: list[dict] = field(default_factory=list)
    step: list[dict] = field(default_factory=list)
    seconds_of_speech: float = 0.0
    utterances: int = 0


def say(text: str, voice: str, rate: int = 150) -> np.ndarray:
    """`text` spoken by espeak-ng's `voice` at `rate` words a minute: 16 kHz mono float32."""
    with tempfile.TemporaryDirectory(prefix="whisperkv-say-") as tmp:
        wav = Path(tmp) / "say.wav"
        _say(text, voice, wav, rate)
        return load_audio(wav)


def _say(text: str, voice: str, wav: Path, rate: int = 150) -> None:
    exe = shutil.which(ESPEAK)
    if exe is None:
        raise ModelError(f"{ESPEAK} is not installed: the integer graphs are calibrated on speech it synthesizes",
                         ESPEAK_FIX)
    p = subprocess.run([exe, "-v", voice, "-s", str(rate), "-w", str(wav), text], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0 or not wav.is_file():
        raise ModelError(f"{ESPEAK} -v {voice} failed: {(p.stderr or p.stdout).strip()[:200]}", ESPEAK_FIX)


def speech(limit: int | None = None, sentences: dict = SENTENCES, voices: dict = VOICES) -> list[Utterance]:
    """Every sentence in every voice of its language (the first `limit` of them, languages interleaved).
    Other `sentences` and `voices` speak held-out speech the same way (bench/int_sensitivity.py)."""
    plan = [(lang, voice, text) for lang in sentences for text in sentences[lang] for voice in voices[lang]]
    en, zh = [u for u in plan if u[0] == "en"], [u for u in plan if u[0] == "zh"]
    mixed = [u for pair in zip(en, zh) for u in pair] + en[len(zh):] + zh[len(en):]
    return [Utterance(lang, voice, text, say(text, voice)) for lang, voice, text in mixed[:limit]]


class _Recorder:
    """Wraps a backend: records the step's inputs at the chosen steps, and passes every call through."""

    def __init__(self, backend, names: tuple[str, ...], keep: set[int]):
        self._b, self._names, self._keep, self.n, self.taken = backend, names, keep, 0, []
        for attr in ("name", "dims", "token_embedding", "positional_embedding", "alignment_heads", "cross"):
            setattr(self, attr, getattr(backend, attr))

    def encode(self, mel):
        return self._b.encode(mel)

    def step(self, x, self_k, self_v, cross_k, cross_v, mask):
        if self.n in self._keep:
            cross = dict(zip(self._names, (cross_k, cross_v)))
            self.taken.append({"x": np.array(x, np.float32), "self_k": np.array(self_k, np.float32),
                               "self_v": np.array(self_v, np.float32),
                               "mask": np.maximum(np.asarray(mask, np.float32), MASK_FLOOR)}
                              | {k: np.asarray(v, np.float32) for k, v in cross.items()})
        self.n += 1
        return self._b.step(x, self_k, self_v, cross_k, cross_v, mask)

    def full(self, *a):
        return self._b.full(*a)


def input_bounds(weights) -> dict[str, float]:
    """The step's `x` is a token embedding plus a positional one: its range is known from the two tables,
    for every token and position, where a few utterances show only some."""
    p = weights.params
    return {"x": float(np.abs(p["decoder.token_embedding.weight"]).max() + np.abs(p["decoder.positional_embedding"]).max())}


def samples(weights, cross: str = "kv", text_steps: int = 2, limit: int | None = None,
            log=lambda line: None) -> Samples:
    """Calibration inputs for both graphs of the `cross` form, from `speech(limit)` through the fp32 graphs."""
    fp32 = TfliteBackend.from_weights(weights, cross=cross)
    tok = WhisperTokenizer.from_weights(weights)
    names = ("F",) if cross == "absorbed" else ("cross_k", "cross_v")
    out = Samples()
    for u in speech(limit):
        mel = mel_windows(u.audio)[0]
        out.encoder.append({"mel": mel[None].astype(np.float32)})
        keep = {*range(PREFIX_STEPS), *range(PREFIX_STEPS + 1, PREFIX_STEPS + 1 + 6 * text_steps, 6)}
        rec = _Recorder(fp32, names, keep)
        opts = DecodeOptions(language=u.language, max_tokens=48, top_k=1)
        for _ in decode_window(rec, tok, mel, opts):
            pass
        out.step += rec.taken
        out.seconds_of_speech += len(u.audio) / 16000
        out.utterances += 1
        log(f"  calibration: {u.language} {u.voice}: {len(u.audio) / 16000:.1f} s, {len(rec.taken)} steps")
    return out
