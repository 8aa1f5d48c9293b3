"""Read any audio librosa can read and turn it into 16 kHz mono float32."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from core.errors import AudioError

SAMPLE_RATE = 16000
SUPPORTED = (".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aiff", ".aif", ".au")
FORMAT_FIX = "use a WAV, FLAC, MP3 or OGG file with recorded speech"


def load_audio(path: str | Path) -> np.ndarray:
    path = Path(path)
    if not path.is_file():
        raise AudioError(f"audio file not found: {path}", "check the path, or record from the microphone instead")
    if path.stat().st_size == 0:
        raise AudioError(f"audio file is empty: {path}", FORMAT_FIX)
    import librosa  # imported here: it costs ~2 s and the board runner never needs it

    try:
        with warnings.catch_warnings():  # librosa's fallback chatter: the error below says it plainly
            warnings.simplefilter("ignore")
            audio, _ = librosa.load(str(path), sr=SAMPLE_RATE, mono=True, dtype=np.float32)
    except Exception as exc:
        kind = "an unsupported format" if path.suffix.lower() not in SUPPORTED else "corrupt or unreadable"
        raise AudioError(f"cannot decode {path.name}: {kind} ({type(exc).__name__})", FORMAT_FIX) from exc
    return check_audio(audio, path.name)


def check_audio(audio: np.ndarray, name: str = "audio") -> np.ndarray:
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if audio.size == 0:
        raise AudioError(f"{name} holds no samples (zero-length audio)", FORMAT_FIX)
    if not np.all(np.isfinite(audio)):
        raise AudioError(f"{name} holds NaN or infinite samples", "re-export the recording")
    return audio


def duration_s(audio: np.ndarray) -> float:
    return len(audio) / SAMPLE_RATE
