"""Microphone audio as blocks for a live stream: an input stream's callback puts each block in a queue and the
generator hands them on. The stream factory is passed in (`sounddevice_stream` in the CLI and the studio, whose
recorder opens the microphone through it too), so tests record through a stand-in microphone."""
from __future__ import annotations

import queue
from typing import Callable, Iterator

import numpy as np

from core.errors import WhisperKVError
from core.model.audio import SAMPLE_RATE

MIC_FIX = ("plug in a microphone (and pick it by its index), install PortAudio (Debian: apt-get install "
           "libportaudio2), or stream an audio file instead")


def sounddevice_stream(**kw):
    """sounddevice.InputStream(**kw). sounddevice is imported only here, at the first recording: without
    PortAudio its import raises OSError, which the callers turn into their "cannot open the microphone"."""
    import sounddevice as sd  # at the first recording: without PortAudio the import raises OSError
    return sd.InputStream(**kw)


def mic_blocks(stream_factory: Callable, device: int | None = None, block_s: float = 0.1,
               should_stop: Callable[[], bool] = lambda: False) -> Iterator[np.ndarray]:
    """16 kHz mono float32 blocks from the input stream until `should_stop()`, the device goes inactive, or the
    generator is closed. `stream_factory(samplerate, channels, dtype, device, blocksize, callback)` returns an
    object with start/stop/close and `active` (sounddevice.InputStream's interface)."""
    inbox: queue.Queue = queue.Queue()

    def on_block(indata, frames, time_info, status):
        inbox.put(np.array(indata[:, 0] if np.ndim(indata) == 2 else indata, np.float32, copy=True))

    try:
        stream = stream_factory(samplerate=SAMPLE_RATE, channels=1, dtype="float32", device=device,
                                blocksize=int(block_s * SAMPLE_RATE), callback=on_block)
        stream.start()
    except WhisperKVError:
        raise
    except Exception as exc:         # PortAudioError, a bad device index, no input device…
        raise WhisperKVError(f"cannot open the microphone ({exc})", MIC_FIX) from exc
    try:
        while not should_stop():
            try:
                block = inbox.get(timeout=0.5)
            except queue.Empty:
                if not getattr(stream, "active", True):
                    return           # the device went away (or a stand-in ran out of audio)
                continue
            yield block
    finally:
        stream.stop()
        stream.close()
