"""Audio that libsndfile cannot read (AAC/M4A, WebM, the sound of a video, …) decoded with FFmpeg's
libraries through PyAV, frame by frame: mono float32 blocks at the file's own rate, so that a long
file keeps bounded memory and core/model/audio.py resamples it as it resamples every other file."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from core.errors import AudioError

CONVERT_FIX = "convert it to WAV or FLAC (for example `ffmpeg -i IN -ac 1 -ar 16000 out.wav`)"


@dataclass
class FFmpegAudio:
    """An audio track FFmpeg opened: its rate, and what to call it in a message."""
    path: Path
    rate: int
    container: str           # FFmpeg's long name, e.g. "QuickTime / MOV"
    codec: str               # e.g. "aac"

    def blocks(self, block: int) -> Iterator[np.ndarray]:
        """The track's samples, each frame's channel mean (what librosa.load does), `block` at a time."""
        import av  # PyAV (FFmpeg's libraries, ~0.1 s): only for a file libsndfile cannot read

        resampler = av.AudioResampler(format="fltp", rate=self.rate)   # any sample format → planar float
        held: list[np.ndarray] = []
        n_held = done = 0
        with av.open(str(self.path)) as container:
            try:
                for frame in container.decode(audio=0):
                    for planar in resampler.resample(frame):
                        mono = planar.to_ndarray().mean(axis=0, dtype=np.float32)
                        held.append(mono)
                        n_held += len(mono)
                        if n_held >= block:
                            done += n_held
                            yield np.concatenate(held)
                            held, n_held = [], 0
                held += [p.to_ndarray().mean(axis=0, dtype=np.float32) for p in resampler.resample(None)]
            except av.FFmpegError as exc:
                at = (done + n_held) / self.rate
                raise AudioError(f"cannot decode {self.path.name}: FFmpeg stopped reading its {self.codec} audio "
                                 f"({self.container} container) at {at:.1f} s: {exc.strerror}",
                                 "the file is cut short or damaged there; " + CONVERT_FIX) from None
        if held:
            yield np.concatenate(held)


def open_ffmpeg(path: Path) -> FFmpegAudio | None:
    """The file's first audio track, or None when FFmpeg does not recognise the file at all; AudioError
    when it does but the file has no audio track or no decoder for it."""
    import av  # PyAV: only for a file libsndfile cannot read

    try:
        container = av.open(str(path))
    except av.FFmpegError:
        return None
    with container:
        kind = container.format.long_name
        if not container.streams.audio:
            tracks = ", ".join(f"{s.type} {s.codec_context.name}" for s in container.streams) or "no tracks"
            raise AudioError(f"{path.name} has no audio track ({kind} container with {tracks})",
                             "open a recording with sound in it")
        stream = container.streams.audio[0]
        codec = stream.codec_context.name if stream.codec_context else "unknown"
        rate = stream.codec_context.sample_rate if stream.codec_context else 0
        if not rate:
            raise AudioError(f"cannot decode {path.name}: this FFmpeg has no decoder for its {codec} audio "
                             f"({kind} container)", CONVERT_FIX)
        return FFmpegAudio(path, rate, kind, codec)
