"""Whisper's log-mel spectrogram, computed on the host and sent to the runner.

Computed one 30 s window at a time, with the same arithmetic whether the audio is an array in memory
(`log_mel`) or a file read block by block (`core/model/mel_file.py`): each STFT frame only needs the
200 samples either side of its centre, so a window needs its own audio plus 200 samples of each
neighbour. Only the normalisation looks at the whole file (its loudest value)."""
from __future__ import annotations

import itertools
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from core.model.audio import SAMPLE_RATE

N_FFT = 400
HOP = 160
N_MELS = 80
N_FRAMES = 3000  # 30 s window
FRAMES_PER_SECOND = SAMPLE_RATE // HOP
WINDOW_SAMPLES = N_FRAMES * HOP
EDGE = N_FFT // 2   # samples of context either side of a frame's centre


FILTERS_FILE = Path(__file__).with_name("mel_filters.npz")


@lru_cache(maxsize=4)
def mel_filters(n_mels: int = N_MELS) -> np.ndarray:
    """librosa's Slaney mel filterbank [n_mels, 201]. Stored for 80 and 128 bins, as openai-whisper does,
    because importing librosa.filters costs about a second at every CLI start; a test checks the copy."""
    with np.load(FILTERS_FILE) as f:
        if f"mel_{n_mels}" in f:
            return f[f"mel_{n_mels}"]
    import librosa  # librosa (~1 s): only for a filter bank mel_filters.npz lacks

    return librosa.filters.mel(sr=SAMPLE_RATE, n_fft=N_FFT, n_mels=n_mels).astype(np.float32)


def _hann_periodic(n: int) -> np.ndarray:
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float64)


def log10_mel(padded: np.ndarray, n_frames: int, n_mels: int = N_MELS) -> np.ndarray:
    """[n_mels, n_frames] float32 log10 mel power of the STFT frames of an already centre-padded signal
    (frame t spans padded[t * HOP : t * HOP + N_FFT]); not yet normalised."""
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:n_frames]
    spec = np.fft.rfft(frames * _hann_periodic(N_FFT), axis=-1)
    power = (np.abs(spec) ** 2).astype(np.float32)                    # [T, 201]
    # One matrix-vector product a frame, not one product of all T: OpenBLAS rounds a column's float32 sums by
    # where the column falls in the matrix (edge kernels, and a split that differs by CPU), so a frame's value
    # would depend on the window it was computed in. Alone, a frame is rounded the same wherever it is.
    mel = np.matmul(mel_filters(n_mels), power[:, :, None])[:, :, 0]     # [T, n_mels]
    return np.ascontiguousarray(np.log10(np.maximum(mel, 1e-10)).T)


def normalise(logs: np.ndarray, top: np.float32) -> np.ndarray:
    """Whisper's normalisation: 80 dB below `top`, the loudest log10 value of the whole audio, is the floor."""
    return ((np.maximum(logs, top - 8.0) + 4.0) / 4.0).astype(np.float32)


def total_frames(n_samples: int) -> int:
    """Mel frames of `n_samples` of audio; a clip shorter than one hop still has one (it is padded)."""
    return max(1, n_samples // HOP)


def raw_windows(blocks: Iterable[np.ndarray], n_mels: int = N_MELS) -> Iterator[np.ndarray]:
    """The unnormalised `log10_mel` of consecutive 30 s windows ([n_mels, 3000], the last one shorter) of
    the audio that `blocks` carry in order, holding at most about two windows of samples at a time.

    The edges are padded as Whisper pads the whole clip: reflected, or zeros when the clip has no more
    than 200 samples; a clip shorter than one hop is first padded with zeros to one hop."""
    source = iter(blocks)
    buf, start, end = np.zeros(0, np.float32), 0, None     # buf holds samples [start, start + len(buf))
    for first in itertools.count(0, N_FRAMES):
        need = (first + N_FRAMES) * HOP + N_FFT
        while end is None and start + len(buf) < need:
            block = next(source, None)
            if block is None:
                end = max(start + len(buf), HOP)
                buf = np.pad(buf, (0, end - start - len(buf)))
            else:
                buf = np.concatenate([buf, np.asarray(block, np.float32).reshape(-1)])
        n = N_FRAMES if end is None else min(N_FRAMES, total_frames(end) - first)
        if n <= 0:
            return
        lo = first * HOP - EDGE
        yield log10_mel(_padded(buf, start, end, lo, lo + (n - 1) * HOP + N_FFT), n, n_mels)
        keep = (first + N_FRAMES) * HOP - EDGE - start    # what the next window needs
        buf, start = buf[keep:], start + keep


def _padded(buf: np.ndarray, start: int, end: int | None, lo: int, hi: int) -> np.ndarray:
    """Samples lo..hi of the audio as np.pad(audio, EDGE, 'reflect') extends it (or 'constant' for a clip
    of EDGE samples or fewer); `buf` holds samples start.., and `end` is the audio's length once known."""
    idx = np.arange(lo, hi)
    if end is not None and end <= EDGE:
        inside = (idx >= 0) & (idx < end)
        return np.where(inside, buf[np.clip(idx, 0, end - 1) - start], np.float32(0))
    idx = np.abs(idx)
    if end is not None:
        idx = np.where(idx >= end, 2 * (end - 1) - idx, idx)
    return buf[idx - start]


def log_mel(audio: np.ndarray, n_mels: int = N_MELS) -> np.ndarray:
    """[n_mels, len(audio) // HOP] normalised log-mel of 16 kHz mono audio (not padded; at least 1 frame)."""
    logs = np.concatenate(list(raw_windows([np.asarray(audio, np.float32)], n_mels)), axis=-1)
    return normalise(logs, logs.max())


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
    return total_frames(len(audio))
