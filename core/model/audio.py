"""Read any audio libsndfile or FFmpeg (through PyAV) can read and turn it into 16 kHz mono float32: whole
(`load_audio`), or block by block (`audio_blocks`) so that a long file never sits in memory at once."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from core.errors import AudioError
from core.model.audio_ffmpeg import open_ffmpeg

SAMPLE_RATE = 16000
# The names a file dialog offers: libsndfile's, then FFmpeg's (which also reads anything else it recognises).
SUPPORTED = (".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".aiff", ".aif", ".au",
             ".m4a", ".aac", ".mp4", ".mov", ".webm", ".mkv", ".mka", ".3gp", ".amr", ".wma")
FORMAT_FIX = "use a recording (WAV, FLAC, MP3, OGG, M4A, WebM, or a video with sound)"
BLOCK = 1 << 19      # input frames per read: about 11 s at 48 kHz


def load_audio(path: str | Path) -> np.ndarray:
    """The whole file as one array (for clips; a long file is better read with `audio_blocks`)."""
    blocks = list(audio_blocks(path))
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)


def audio_blocks(path: str | Path, block: int = BLOCK) -> Iterator[np.ndarray]:
    """The file's samples, 16 kHz mono float32, in consecutive blocks; AudioError names what is wrong
    with the file (raised when the bad part is reached, so read it to the end before trusting it).

    libsndfile's formats (WAV, FLAC, OGG, MP3, …) are read `block` frames at a time; the rest (AAC/M4A,
    WebM, a video's sound, …) are decoded by FFmpeg frame by frame; both are resampled as a stream."""
    path = checked_path(path)
    total = 0
    for samples in _decoded(path, block):
        if not np.isfinite(samples).all():
            raise nan_error(path.name)
        total += len(samples)
        yield samples
    if total == 0:
        raise AudioError(f"{path.name} holds no samples (zero-length audio)", FORMAT_FIX)


def checked_path(path: str | Path) -> Path:
    path = Path(path)
    if path.is_dir():
        raise AudioError(f"{path} is a directory, not an audio file", "name one audio file inside it")
    if not path.is_file():
        raise AudioError(f"audio file not found: {path}", "check the path, or record from the microphone instead")
    if path.stat().st_size == 0:
        raise AudioError(f"audio file is empty: {path}", FORMAT_FIX)
    return path


def nan_error(name: str) -> AudioError:
    return AudioError(f"{name} contains NaN/Inf samples", "re-export the recording (16-bit PCM WAV cannot hold them)")


def _open_soundfile(path: Path):
    """The file opened by libsndfile, or None when libsndfile cannot read it (FFmpeg then tries)."""
    import soundfile as sf  # libsndfile: a PC's reader, not on a board's Python

    try:
        return sf.SoundFile(str(path))
    except (sf.LibsndfileError, RuntimeError, TypeError):
        return None


def _decoded(path: Path, block: int) -> Iterator[np.ndarray]:
    f = _open_soundfile(path)
    if f is None:
        yield from _ffmpeg_decoded(path, block)
        return
    with f:
        try:
            yield from _resampled(_mono_blocks(f, block), f.samplerate)
        except AudioError:
            raise
        except Exception as exc:
            raise AudioError(f"cannot decode {path.name}: libsndfile read its {f.format} header ({f.subtype}) "
                             f"but not its samples ({type(exc).__name__}: {exc})",
                             "the file is cut short or damaged; " + FORMAT_FIX) from exc


def _ffmpeg_decoded(path: Path, block: int) -> Iterator[np.ndarray]:
    track = open_ffmpeg(path)
    if track is None:
        kind = ("an unsupported format" if path.suffix.lower() not in SUPPORTED
                else f"what is inside is not {path.suffix} audio, or the file is cut short")
        raise AudioError(f"cannot read {path.name}: unreadable, neither libsndfile nor FFmpeg recognises it as "
                         f"audio ({kind})", FORMAT_FIX)
    yield from _resampled(track.blocks(block), track.rate)


def _mono_blocks(f, block: int) -> Iterator[np.ndarray]:
    """What librosa.load does per frame: float32, the channel mean."""
    while True:
        data = f.read(block, dtype="float32", always_2d=True)
        if not len(data):
            return
        yield data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else np.ascontiguousarray(data[:, 0])


def _resampled(blocks: Iterator[np.ndarray], rate: int) -> Iterator[np.ndarray]:
    """soxr's HQ resampler as a stream (sample for sample what librosa.load's one-shot call gives), then
    librosa's length rule: pad or cut to ceil(n · 16000 / rate)."""
    if rate == SAMPLE_RATE:
        yield from blocks
        return
    import soxr  # only for a file not at 16 kHz; a PC's package

    stream = soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32", quality="HQ")
    n_in = n_out = 0
    for samples in blocks:
        n_in += len(samples)
        out = stream.resample_chunk(samples, last=False)
        n_out += len(out)
        yield out
    want = int(np.ceil(n_in * SAMPLE_RATE / rate)) - n_out
    tail = stream.resample_chunk(np.zeros(0, np.float32), last=True)[:max(0, want)]
    yield np.pad(tail, (0, max(0, want - len(tail)))).astype(np.float32, copy=False)


def check_audio(audio: np.ndarray, name: str = "audio") -> np.ndarray:
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if audio.size == 0:
        raise AudioError(f"{name} holds no samples (zero-length audio)", FORMAT_FIX)
    if not np.all(np.isfinite(audio)):
        raise nan_error(name)
    return audio


def duration_s(audio: np.ndarray) -> float:
    return len(audio) / SAMPLE_RATE
