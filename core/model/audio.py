"""Read any audio libsndfile or librosa can read and turn it into 16 kHz mono float32: whole
(`load_audio`), or block by block (`audio_blocks`) so that a long file never sits in memory at once."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Iterator

import numpy as np

from core.errors import AudioError

SAMPLE_RATE = 16000
SUPPORTED = (".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aiff", ".aif", ".au")
FORMAT_FIX = "use a WAV, FLAC, MP3 or OGG file with recorded speech"
BLOCK = 1 << 19      # input frames per read: about 11 s at 48 kHz


def load_audio(path: str | Path) -> np.ndarray:
    """The whole file as one array (for clips; a long file is better read with `audio_blocks`)."""
    blocks = list(audio_blocks(path))
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)


def audio_blocks(path: str | Path, block: int = BLOCK) -> Iterator[np.ndarray]:
    """The file's samples, 16 kHz mono float32, in consecutive blocks; AudioError names what is wrong
    with the file (raised when the bad part is reached, so read it to the end before trusting it).

    libsndfile's formats (WAV, FLAC, OGG, MP3, …) are read `block` frames at a time and resampled as a
    stream. Formats only librosa reads (m4a, …) are decoded whole first: their samples (64 kB a second)
    are then held in memory at once."""
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
    """The file opened by libsndfile, or None when libsndfile cannot read it (librosa then tries)."""
    import soundfile as sf

    try:
        return sf.SoundFile(str(path))
    except (sf.LibsndfileError, RuntimeError, TypeError):
        return None


def _decoded(path: Path, block: int) -> Iterator[np.ndarray]:
    f = _open_soundfile(path)
    try:
        if f is None:
            yield _librosa_load(path)
            return
        with f:
            yield from _resampled(_mono_blocks(f, block), f.samplerate)
    except AudioError:
        raise
    except Exception as exc:
        kind = "an unsupported format" if path.suffix.lower() not in SUPPORTED else "corrupt or unreadable"
        raise AudioError(f"cannot decode {path.name}: {kind} ({type(exc).__name__})", FORMAT_FIX) from exc


def _librosa_load(path: Path) -> np.ndarray:
    import librosa  # imported only here: it costs ~2 s and the board runner never needs it

    with warnings.catch_warnings():  # librosa's fallback chatter: the error above says it plainly
        warnings.simplefilter("ignore")
        try:
            audio, _ = librosa.load(str(path), sr=SAMPLE_RATE, mono=True, dtype=np.float32)
        except librosa.util.exceptions.ParameterError as exc:
            if "finite" in str(exc):       # librosa refuses NaN/Inf before we could count them
                raise nan_error(path.name) from None
            raise
    return audio


def _mono_blocks(f, block: int) -> Iterator[np.ndarray]:
    """What librosa.load does per frame for the formats libsndfile reads: float32, the channel mean."""
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
    import soxr

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
