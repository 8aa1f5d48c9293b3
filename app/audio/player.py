"""Play back the loaded or recorded audio through sounddevice (non-blocking)."""
from __future__ import annotations

import numpy as np

from core.errors import WhisperKVError

SAMPLE_RATE = 16000


class PlaybackError(WhisperKVError):
    code = "no_audio_output"


def play(samples: np.ndarray) -> None:
    try:
        import sounddevice as sd  # at the first play: without PortAudio the import itself raises OSError
    except OSError as exc:
        raise PlaybackError("playback is not possible: the PortAudio library is missing",
                            "install PortAudio (Debian: apt-get install libportaudio2)") from exc
    try:
        sd.play(samples, SAMPLE_RATE)
    except Exception as exc:
        raise PlaybackError(f"playback failed: no usable audio output device ({exc})",
                            "connect speakers or headphones and try again") from exc


def stop() -> None:
    try:
        import sounddevice as sd  # lazy, as in play(): without PortAudio the import raises
        sd.stop()
    except Exception:  # nothing was playing, or there is no audio library: nothing to stop
        pass
