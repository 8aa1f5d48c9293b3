"""`whisperkv stream --mic`: the microphone through sounddevice (core/stream/mic.py does the rest)."""
from __future__ import annotations

from core.errors import WhisperKVError
from core.stream.mic import MIC_FIX


def sounddevice_stream(**kw):
    try:
        import sounddevice as sd
    except OSError as exc:           # PortAudio missing
        raise WhisperKVError(f"cannot record: {exc}", MIC_FIX) from None
    return sd.InputStream(**kw)
