"""What the runner serves: the loaded model and its encoder cache, or why the model could not load; what `hello`
says about it, and the decode options a request may ask of it."""
from __future__ import annotations

import logging
import os
import platform
import time
from dataclasses import asdict

import numpy as np

from core.decode.options import DecodeOptions, OptionsError
from core.errors import wire_fix
from core.model.backend import AttentionBackend, windows_of
from core.model.dims import FULL_WINDOW_S
from core.model.encoder_cache import EncoderCache
from device import protocol as P
from device.runner.neuron.npu_profile import gather
from device.spec.runner_kind import npu_kind, runner_kind
from device.spec.soc import board_soc

log = logging.getLogger("whisperkv.agent")
PROFILE_RECREATES = ("profiling: each runtime is released and re-created after every request so that the "
                     "Neuron runtime writes its report; profiled timings include that re-creation")


class ServedModel:
    """Loads once at start; a failed load is kept as `error` and served as model_missing, never a dead runner."""

    def __init__(self, path: str | None, backend: str, encoder_cache_mb: int = 128, delegate: str | None = None,
                 config=None):
        self.error: str | None = None
        self.error_fix: list | None = None   # its fix's parts when that names device settings (core.errors.wire_fix)
        self.model = None           # device.runner.load.LoadedModel
        self.encoder_cache = None
        self.load_ms: float | None = None
        self.npu_profile = config.npu_profile if config is not None else None   # the profiler's folder
        self.soc = board_soc()        # read once: hello names it (docs/protocol.md)
        t0 = time.perf_counter()
        try:
            # The decoder's import cost is paid here too, not on the first request.
            from device.runner.load import load_model_source

            log.info("loading model… (%s, backend %s)", path or "the installed wheels", backend)
            # `auto`: device/runner/backends.py, choose_auto.
            self.model = load_model_source(path, backend, delegate=delegate, config=config)
            # Reruns of the same audio (cache on/off comparisons, QA) skip the encoder.
            self.encoder_cache = EncoderCache(encoder_cache_mb << 20)
            self.load_ms = (time.perf_counter() - t0) * 1e3
            log.info("model %s (%s) on %s backend loaded in %.1f s", self.model.sha256[:12], self.model.source,
                     self.model.backend.name, time.perf_counter() - t0)
        except Exception as exc:
            self.error, self.error_fix = str(exc), wire_fix(exc)
            log.error("model not loaded: %s", exc)

    def hello(self, limits: dict) -> dict:
        return {**hello_of(self.model, self.soc, limits), **self.profile_hello(),
                **({"load_ms": round(self.load_ms, 1)} if self.load_ms is not None else {})}

    def profile_hello(self) -> dict:
        """With the profiler on: `npu_profile`, and where the backend re-creates its runtimes after each request to
        flush the report (dla: the runtime writes it when released), `npu_profile_note` saying so: a profiled
        request's times include that re-creation, and are no user's times."""
        if not self.npu_profile:
            return {}
        recreates = self.model is not None and getattr(self.model.backend, "flush_profile", None) is not None
        return {"npu_profile": True, **({"npu_profile_note": PROFILE_RECREATES} if recreates else {})}

    def npu_report(self) -> list[dict] | None:
        """With the profiler on, the reports the Neuron runtime wrote during the request just served (none when
        the backend never reached the runtime); None when it is off."""
        if not self.npu_profile:
            return None
        flush = getattr(self.model.backend, "flush_profile", None)
        if flush is not None:
            flush()
        return gather(self.npu_profile)

    def options(self, header: dict, rid: str) -> DecodeOptions:
        """The transcribe header's decode options, checked; ProtocolError(bad_request) names a bad field."""
        try:
            options = DecodeOptions.from_wire(header, self.model.tokenizer.languages,
                                              self.model.backend.dims.n_text_ctx, self.model.backend.dims.n_vocab,
                                              windows_of(self.model.backend))
        except OptionsError as exc:
            raise P.ProtocolError(P.BAD_REQUEST, str(exc), rid, wire_fix(exc)) from None
        if options.wants_attention:
            self.check_attention(options, rid)
        return options

    def check_attention(self, options: DecodeOptions, rid: str) -> None:
        """Cross-attention comes out of the step graph's attention variant only: refused up front rather
        than failing at the first step, or answering without it (with the cache off the options refused it)."""
        asked = "word_timestamps" if options.word_timestamps else "attention"
        if not isinstance(self.model.backend, AttentionBackend):
            raise P.ProtocolError(P.BAD_REQUEST, f"{asked}: backend {self.model.backend.name!r} has no "
                                  "step_with_attention here, so it cannot report cross-attention; on dla compile "
                                  "a float bundle with this whisperkv (`whisperkv compile DIR`: it adds the step's "
                                  "attention variant), else use a numpy, onnx or tflite runner, or leave attention "
                                  "off", rid)


def hello_of(model, soc: dict, limits: dict) -> dict:
    """The `hello` event for a loaded model (device.runner.load.LoadedModel) on a board with this SoC."""
    dims = model.backend.dims
    return {"type": "hello", "protocol": P.PROTOCOL, "runner_version": P.RUNNER_VERSION, "runner": "python",
            "backend": model.backend.name,
            # tflite: the interpreter, the delegate, and how many ops each graph runs in it vs on the CPU
            **({"backend_detail": model.backend.describe()} if hasattr(model.backend, "describe") else {}),
            "model": {"dims": asdict(dims), "sha256": model.sha256, "source": model.source},
            "cache": cache_of(model.backend),
            "soc": soc,
            "os": platform.system(),     # "Linux"; the native runner says "Android <release>" on Android
            # what the runner runs on and which Neuron runtime it loaded: the doctor's board-only rungs read these
            "runner_kind": runner_kind(), "npu": npu_kind(model.backend),
            "machine": {"arch": platform.machine(), "cores": os.cpu_count()},
            "limits": limits,
            "mel_dtypes": list(P.MEL_DTYPES),
            **windows_hello(model.backend),
            "features": features_of(model)}


def windows_hello(backend) -> dict:
    """hello's `windows`: the encoder windows a request's window_s may ask for; left out where 30 s is the only
    one, as a runner that predates the field (and the native runner) says it."""
    windows = windows_of(backend)
    return {"windows": list(windows)} if windows != (FULL_WINDOW_S,) else {}


def cache_of(backend) -> dict:
    """hello's `cache`: its length, and the bytes a token takes as the backend holds it, with their dtype."""
    dims, dtype = backend.dims, np.dtype(getattr(backend, "cache_layout", {}).get("dtype", np.float32))
    return {"max_len": dims.n_text_ctx, "bytes_per_token": dims.cache_bytes_per_token(dtype.itemsize),
            "dtype": str(dtype)}


def features_of(model) -> list[str]:
    """Optional request fields this runner serves (docs/protocol.md, hello); an older runner ignores them."""
    attention = ["attention", "word_timestamps"] if isinstance(model.backend, AttentionBackend) else []
    return attention + ["temperature_fallback", *P.FEATURES]
