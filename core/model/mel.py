"""Whisper's log-mel spectrogram, computed on the host and sent to the runner."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from core.model.audio import SAMPLE_RATE

N_FFT = 400
HOP = 160
N_MELS = 80
N_FRAMES = 3000  # 30 s window
WINDOW_SAMPLES = N_FRAMES * HOP


FILTERS_FILE = Path(__file__).with_name("mel_filters.npz")


@lru_cache(maxsize=4)
def mel_filters(n_mels: int = N_MELS) -> np.ndarray:
    """librosa's Slaney mel filterbank [n_mels, 201]. Stored for 80 and 128 bins, as openai-whisper does,
    because importing librosa.filters costs about a second at every CLI start; a test checks the copy."""
    with np.load(FILTERS_FILE) as f:
        if f"mel_{n_mels}" in f:
            return f[f"mel_{n_mels}"]
    import librosa

    return librosa.filters.mel(sr=SAMPLE_RATE, n_fft=N_FFT, n_mels=n_mels).astype(np.float32)


def _hann_periodic(n: int) -> np.ndarray:
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float64)


def log_mel(audio: np.ndarray, n_mels: int = N_MELS) -> np.ndarray:
    """[n_mels, len(audio) // HOP] normalised log-mel of 16 kHz mono audio (not padded)."""
    audio = np.asarray(audio, dtype=np.float32)
    padded = np.pad(audio, N_FFT // 2, mode="reflect") if len(audio) > N_FFT // 2 else \
        np.pad(audio, N_FFT // 2, mode="constant")
    n_frames = 1 + (len(padded) - N_FFT) // HOP
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:n_frames]
    spec = np.fft.rfft(frames * _hann_periodic(N_FFT), axis=-1)
    power = (np.abs(spec) ** 2).T[:, :-1]  # Whisper drops the last STFT frame
    mel = mel_filters(n_mels) @ power.astype(np.float32)
    logs = np.log10(np.maximum(mel, 1e-10))
    logs = np.maximum(logs, logs.max() - 8.0)
    return ((logs + 4.0) / 4.0).astype(np.float32)


def pad_or_trim(mel: np.ndarray, n_frames: int = N_FRAMES) -> np.ndarray:
    """Pad the *normalised* mel with 0.0 (as openai-whisper and faster-whisper do), or trim."""
    if mel.shape[-1] >= n_frames:
        return mel[..., :n_frames]
    return np.pad(mel, [(0, 0)] * (mel.ndim - 1) + [(0, n_frames - mel.shape[-1])])


def mel_windows(audio: np.ndarray) -> np.ndarray:
    """[W, 80, 3000]: the audio's log-mel cut into consecutive 30 s windows, the last one padded."""
    mel = log_mel(audio)
    n = max(1, -(-mel.shape[-1] // N_FRAMES))
    return np.stack([pad_or_trim(mel[:, i * N_FRAMES:(i + 1) * N_FRAMES]) for i in range(n)])


def content_frames(audio: np.ndarray) -> int:
    """Mel frames that hold audio (the rest of the last window is padding)."""
    return len(audio) // HOP
