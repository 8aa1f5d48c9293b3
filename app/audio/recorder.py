"""Microphone recording through sounddevice, Qt-free. The stream factory is injectable so a test can
record through a stand-in stream on a machine without audio devices."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

from core.errors import WhisperKVError
from core.stream.mic import sounddevice_stream

SAMPLE_RATE = 16000
NO_PORTAUDIO_FIX = "install PortAudio (Debian: apt-get install libportaudio2), or open an audio file instead"
NO_DEVICE_FIX = "plug in a microphone, or open an audio file instead"


@dataclass
class InputDevice:
    index: int
    name: str
    channels: int


def input_devices() -> tuple[list[InputDevice], str]:
    """The input devices, and if there are none, a sentence saying why and what to do."""
    try:
        import sounddevice as sd  # at the first look: without PortAudio the import itself raises OSError
    except OSError:
        return [], f"Recording is off: the PortAudio library is missing — {NO_PORTAUDIO_FIX}."
    try:
        found = [InputDevice(i, d["name"], d["max_input_channels"])
                 for i, d in enumerate(sd.query_devices()) if d["max_input_channels"] > 0]
    except Exception as exc:
        return [], f"Recording is off: PortAudio could not list devices ({exc}) — {NO_DEVICE_FIX}."
    if not found:
        return [], f"Recording is off: no audio input device was found — {NO_DEVICE_FIX}."
    return found, ""


class RecordError(WhisperKVError):
    code = "no_audio_input"


class Recorder:
    """Collects blocks from an input stream's callback thread; the UI polls `level` and calls stop()."""

    def __init__(self, stream_factory: Callable = sounddevice_stream):
        self.stream_factory = stream_factory
        self._stream = None
        self._blocks: list[np.ndarray] = []
        self._lock = threading.Lock()
        self.level = 0.0          # RMS of the latest block, 0..1

    @property
    def recording(self) -> bool:
        return self._stream is not None

    def start(self, device: int | None = None) -> None:
        """RecordError when the stream cannot open; the caller turns it into a dialog."""
        with self._lock:
            self._blocks = []
        self.level = 0.0
        try:
            stream = self.stream_factory(samplerate=SAMPLE_RATE, channels=1, dtype="float32", device=device,
                                         callback=self._on_block)
            stream.start()
        except Exception as exc:  # PortAudioError, OSError, ValueError for a bad device index…
            raise RecordError(f"cannot open the microphone ({exc})",
                              "pick another input device, check it is not in use, or open an audio file") from exc
        self._stream = stream

    def _on_block(self, indata, frames, time_info, status) -> None:
        block = np.array(indata[:, 0] if np.ndim(indata) == 2 else indata, dtype=np.float32, copy=True)
        with self._lock:
            self._blocks.append(block)
        self.level = float(np.sqrt(np.mean(block ** 2))) if block.size else 0.0

    def seconds(self) -> float:
        with self._lock:
            return sum(len(b) for b in self._blocks) / SAMPLE_RATE

    def stop(self) -> np.ndarray:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.stop()
            stream.close()
        with self._lock:
            blocks, self._blocks = self._blocks, []
        self.level = 0.0
        return np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.float32)
