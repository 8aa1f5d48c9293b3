"""The audio the next run will send: samples, and the mel windows computed from them exactly once."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.model.audio import SAMPLE_RATE, check_audio, load_audio
from core.model.file_hash import sha256_files
from core.model.mel import content_frames, mel_windows


@dataclass
class AudioClip:
    name: str
    samples: np.ndarray          # float32, 16 kHz mono
    mels: np.ndarray             # [W, 80, 3000]: what gets sent to the runner
    path: str = ""               # empty for a recording
    sha256: str = ""             # of the file's bytes, read when loaded: a run finds its file again by it

    @property
    def duration_s(self) -> float:
        return len(self.samples) / SAMPLE_RATE

    @property
    def n_frames(self) -> int:
        """Mel frames that hold audio: timestamps mode seeks over these, never into the padding."""
        return content_frames(self.samples)


def load_clip(path: str | Path) -> AudioClip:
    samples = load_audio(path)
    return AudioClip(Path(path).name, samples, mel_windows(samples), str(Path(path).resolve()),
                     sha256_files([path]))


def clip_from_samples(name: str, samples: np.ndarray) -> AudioClip:
    samples = check_audio(samples, name)
    return AudioClip(name, samples, mel_windows(samples))
