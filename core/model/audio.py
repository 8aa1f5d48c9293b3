"""Read any audio libsndfile or librosa can read and turn it into 16 kHz mono float32."""
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
    try:
        audio = _read_soundfile(path)
        if audio is None:
            import librosa  # imported only here: it costs ~2 s and the board runner never needs it

            with warnings.catch_warnings():  # librosa's fallback chatter: the error below says it plainly
                warnings.simplefilter("ignore")
                audio, _ = librosa.load(str(path), sr=SAMPLE_RATE, mono=True, dtype=np.float32)
    except Exception as exc:
        kind = "an unsupported format" if path.suffix.lower() not in SUPPORTED else "corrupt or unreadable"
        raise AudioError(f"cannot decode {path.name}: {kind} ({type(exc).__name__})", FORMAT_FIX) from exc
    return check_audio(audio, path.name)


def _read_soundfile(path: Path) -> np.ndarray | None:
    """What librosa.load does for the formats libsndfile reads (WAV, FLAC, OGG, …): float32, the channel
    mean, then soxr's HQ resampler. None when libsndfile cannot read the file (librosa then tries)."""
    import soundfile as sf

    try:
        audio, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError):
        return None
    audio = audio.mean(axis=1, dtype=np.float32) if audio.shape[1] > 1 else audio[:, 0]
    if sr != SAMPLE_RATE:
        import soxr

        n = int(np.ceil(len(audio) * SAMPLE_RATE / sr))     # librosa's length rule: pad or cut to ceil
        audio = soxr.resample(audio, sr, SAMPLE_RATE, quality="HQ").astype(np.float32, copy=False)
        audio = np.pad(audio[:n], (0, max(0, n - len(audio))))
    return audio


def check_audio(audio: np.ndarray, name: str = "audio") -> np.ndarray:
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if audio.size == 0:
        raise AudioError(f"{name} holds no samples (zero-length audio)", FORMAT_FIX)
    if not np.all(np.isfinite(audio)):
        raise AudioError(f"{name} holds NaN or infinite samples", "re-export the recording")
    return audio


def duration_s(audio: np.ndarray) -> float:
    return len(audio) / SAMPLE_RATE
