"""Voice activity detection for the live stream: Silero VAD (v6, MIT) run by ONNX Runtime.

Why this one: a 1.2 MB ONNX model that faster-whisper ships (faster_whisper/assets/silero_vad_v6.onnx) and
runs the same way; ONNX Runtime is already a dependency, so nothing else comes in (the `silero-vad` package
needs torch). It is what whisper_streaming's VAD controller uses. The model is found without importing
faster-whisper, whose import loads CTranslate2.

`VoiceGate` turns its per-frame speech probabilities into speech starts and ends with the thresholds of
Silero's own `get_speech_timestamps`: speech starts at p >= 0.5, ends after `min_silence_s` below 0.35."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.errors import WhisperKVError

SAMPLE_RATE = 16000
FRAME = 512           # samples per probability: 32 ms
CONTEXT = 64          # samples of the previous frame the model sees before each frame
VAD_FIX = "install faster-whisper (pip install 'faster-whisper>=1.0'), which ships the Silero VAD model, or run without the VAD gate"


def silero_model_path() -> Path:
    spec = importlib.util.find_spec("faster_whisper")
    locations = list(spec.submodule_search_locations or []) if spec else []
    found = [p for loc in locations for p in sorted(Path(loc, "assets").glob("silero_vad_v*.onnx"))]
    if not found:
        raise WhisperKVError("the Silero VAD model (faster_whisper/assets/silero_vad_v*.onnx) was not found", VAD_FIX)
    return found[-1]


class SileroVad:
    """Speech probability of each 32 ms frame; the model's state carries over from call to call, so a stream
    fed in pieces gets the same probabilities as fed at once."""

    def __init__(self, path: str | Path | None = None):
        import onnxruntime as ort  # ONNX Runtime (~0.3 s): only when a VAD is made

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        opts.log_severity_level = 4
        self.session = ort.InferenceSession(str(path or silero_model_path()), sess_options=opts,
                                            providers=["CPUExecutionProvider"])
        self.reset()

    def reset(self) -> None:
        self.h = np.zeros((1, 1, 128), np.float32)
        self.c = np.zeros((1, 1, 128), np.float32)
        self.context = np.zeros(CONTEXT, np.float32)

    def probs(self, audio: np.ndarray) -> np.ndarray:
        """One probability per whole 512-sample frame of `audio` (a multiple of 512 samples)."""
        frames = np.asarray(audio, np.float32).reshape(-1, FRAME)
        if not len(frames):
            return np.zeros(0, np.float32)
        contexts = np.concatenate([self.context[None], frames[:-1, -CONTEXT:]])
        out, self.h, self.c = self.session.run(None, {"input": np.concatenate([contexts, frames], 1),
                                                      "h": self.h, "c": self.c})
        self.context = frames[-1, -CONTEXT:].copy()
        return np.asarray(out, np.float32).reshape(-1)


@dataclass
class VoiceGate:
    """Feeds audio through a VAD and reports ("start" | "end", sample) edges of speech, in absolute samples."""
    vad: SileroVad
    threshold: float = 0.5
    neg_threshold: float = 0.35
    min_silence_s: float = 0.5
    speaking: bool = False
    _rest: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    _frames: int = 0                 # frames seen
    _quiet_since: int | None = None  # frame index where the current run of silence began

    def push(self, samples: np.ndarray) -> list[tuple[str, int]]:
        audio = np.concatenate([self._rest, np.asarray(samples, np.float32).reshape(-1)])
        whole = len(audio) // FRAME * FRAME
        self._rest = audio[whole:]
        edges = []
        for p in self.vad.probs(audio[:whole]):
            i, self._frames = self._frames, self._frames + 1
            if not self.speaking and p >= self.threshold:
                self.speaking, self._quiet_since = True, None
                edges.append(("start", i * FRAME))
            elif self.speaking:
                if p >= self.threshold:
                    self._quiet_since = None
                elif p < self.neg_threshold and self._quiet_since is None:
                    self._quiet_since = i
                if self._quiet_since is not None and (i + 1 - self._quiet_since) * FRAME >= self.min_silence_s * SAMPLE_RATE:
                    self.speaking = False
                    edges.append(("end", self._quiet_since * FRAME))
                    self._quiet_since = None
        return edges
