"""A stand-in for sounddevice.InputStream: this machine has no audio input device, so recording tests
feed real speech (a bundled clip) through the same callback interface PortAudio would call."""
from __future__ import annotations

import threading

import numpy as np

BLOCK = 1600  # 100 ms at 16 kHz


class StandInInputStream:
    def __init__(self, samples: np.ndarray, *, samplerate, channels, dtype, device, callback):
        assert samplerate == 16000 and channels == 1 and dtype == "float32"
        self.samples = samples.astype(np.float32)
        self.callback = callback
        self.device = device
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._feed, daemon=True, name="stand-in-mic")
        self.started = self.closed = False

    def start(self) -> None:
        self.started = True
        self._thread.start()

    def _feed(self) -> None:
        # Like PortAudio, blocks come from another thread; unlike it, as fast as the test wants.
        for i in range(0, len(self.samples), BLOCK):
            if self._stop.is_set():
                return
            self.callback(self.samples[i:i + BLOCK].reshape(-1, 1), BLOCK, None, None)

    def fed_everything(self) -> bool:
        return self.started and not self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def close(self) -> None:
        self.closed = True
