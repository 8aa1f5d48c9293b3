"""Recordings in the formats phones, browsers and cameras write (AAC in M4A, Opus in WebM, a video with an
AAC track), written by PyAV itself from a bundled clip, so the tests need no files of their own."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

# (container format, audio codec, the rate the codec is given, a video track too)
KINDS = {
    "m4a": ("mp4", "aac", 16000, False),
    "webm": ("webm", "libopus", 48000, False),
    "mp4": ("mp4", "aac", 44100, True),
}


def write_as(src: Path, dest: Path, kind: str | None = None) -> Path:
    """`src` (any file libsndfile reads) re-encoded into `dest`, whose suffix picks the format."""
    import av

    fmt, codec, rate, video = KINDS[kind or dest.suffix[1:]]
    samples, src_rate = sf.read(str(src), dtype="float32", always_2d=True)
    stereo = np.ascontiguousarray(np.repeat(samples[:, :1], 2, axis=1).T)   # two channels: the mix is tested too
    with av.open(str(dest), "w", format=fmt) as out:
        audio = out.add_stream(codec, rate=rate, layout="stereo")
        picture = None
        if video:
            picture = out.add_stream("mpeg4", rate=5)
            picture.width, picture.height, picture.pix_fmt = 64, 48, "yuv420p"
        step = 1024
        for i in range(0, stereo.shape[1], step):
            frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(stereo[:, i:i + step]), format="fltp",
                                               layout="stereo")
            frame.sample_rate = src_rate
            frame.pts = i
            out.mux(audio.encode(frame))
        out.mux(audio.encode(None))
        if picture is not None:
            for _ in range(int(5 * stereo.shape[1] / src_rate)):
                image = av.VideoFrame.from_ndarray(np.zeros((48, 64, 3), np.uint8), format="rgb24")
                out.mux(picture.encode(image))
            out.mux(picture.encode(None))
    return dest
