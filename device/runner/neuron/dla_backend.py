"""The runner's `dla` backend: a bundle's compiled `.dla` graphs on MediaTek's Neuron runtime (the NPU).

One runtime per graph (encoder, decoder step), created once at load (device/runner/neuron/neuron_runtime.py); the step's
attention variant (`decoder_step_attention.dla`, for word timings and a live stream) only when first asked for.
At load every graph's slots are checked against the contract `whisperkv compile` recorded in model.json and their
form taken from the runtime (device/runner/neuron/neuron_slots.py).

The native path (the default: conversion suppressed, as the one public Whisper runner on this family feeds it):
the self cache, the window's cross state and the mask are kept in fp16, the mask's hidden positions at -10000 as
that runner masks (fp16's -1e9 is -inf); only the logits (the decoder's sampling) and the embedding row (the CPU's
lookup) are converted, on the CPU. `?neuron_io=converted` feeds the `.tflite`'s own fp32 and lets the runtime
convert. An integer bundle's (a16w8, a8w8, mixed) int8/int16 slots go through their recorded scale on both paths.
`hello` names the library, its version, the API, the path, each slot's sizes and derived form, and where
ncc-tflite's major version (model.json) differs from the runtime's, a warning, also logged on stderr.
A bundle compiled with shorter windows serves them (core.model.backend.WindowBackend): each window's encoder `.dla`
created when first asked for, its cross state fed to the step's first positions with the step's `cross_mask`
hiding the rest (device/runner/tflite/cross_window.py).
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from core.errors import Fix, ModelError, Setting
from core.model.alignment import alignment_heads
from core.model.backend import check_cross
from core.model.dims import FULL_WINDOW_S
from core.model.kv_cache import uncached_by_steps
from core.model.weights import ModelDims
from device.runner.bundle import read_bundle, window_role
from device.runner.neuron.dla_graph import DlaGraph
from device.runner.neuron.neuron_runtime import NeuronError, NeuronLibrary
from device.runner.neuron.neuron_slots import check_contract
from device.runner.neuron.npu_profile import point_at
from device.runner.tflite.cross_window import CrossWindow
from device.spec.neuron_fixes import NO_DLA_FIX
from device.spec.neuron_paths import version_warning

MASK_FP16 = -10000.0    # the Genio 720 runner's hidden-position value in its fp16 masks
ATTENTION = "decoder_step_attention"
log = logging.getLogger(__name__)


class DlaBackend:
    """Encoder and decoder step as compiled `.dla` graphs on the Neuron runtime; embeddings on the CPU."""

    name = "dla"

    def __init__(self, bundle, neuron_lib: str | None = None, threads: int = 1, npu_profile: str | None = None,
                 neuron_api: str | None = None, neuron_qos: bool = True, neuron_io: str | None = None,
                 neuron_create: str | None = None):
        dla = bundle.manifest.get("dla")
        if not dla or not {"encoder", "decoder_step"} <= set(dla.get("graphs", {})):
            raise ModelError(f"the bundle at {bundle.path} has no compiled .dla graphs", NO_DLA_FIX)
        check_contract(dla, str(bundle.path))
        self.dims: ModelDims = bundle.dims
        self.sha256, self.cross = bundle.weights_sha256, check_cross(bundle.cross)
        self.soc, self.dtype, self.folder, self.threads = dla.get("soc", ""), bundle.dtype, bundle.path, threads
        self.graph_entries = dla["graphs"]
        self._cross_names = ("F",) if self.cross == "absorbed" else ("cross_k", "cross_v")
        self.token_embedding, self.positional_embedding = bundle.token_embedding, bundle.positional_embedding
        self.lib = NeuronLibrary(neuron_lib, neuron_api, neuron_qos, neuron_io, neuron_create)
        if self.lib.io_note:
            log.warning("%s", self.lib.io_note)
        self.npu_profile = npu_profile
        self.compiler_version = str(dla.get("version") or "unknown")
        self.warning = version_warning(self.compiler_version, self.lib.version())
        if self.warning:
            log.warning("%s", self.warning)
        self._graphs: dict[str, DlaGraph] = {}
        for role in ("encoder", "decoder_step"):
            self._open(role)
        step = self._graphs["decoder_step"]
        self.cache_layout = ({"dtype": np.float16, "mask_value": MASK_FP16}
                             if step.form("self_k").native == np.float16 else {})
        self._mask_fp16 = step.form("mask").native == np.float16
        masked = "cross_mask" in step.graph.names["input"]
        self.windows = tuple(w for w in sorted({*bundle.windows, FULL_WINDOW_S}) if w == FULL_WINDOW_S or masked and
                             window_role(w) in self.graph_entries)
        self._cross_window = (CrossWindow(self.dims.n_audio_ctx, MASK_FP16 if step.form("cross_mask").native ==
                                          np.float16 else -1e9) if masked else None)

    def _open(self, role: str, beside: str | None = None) -> DlaGraph:
        try:
            point_at(self.npu_profile, role)
            self._graphs[role] = DlaGraph(self.lib, self.folder, self.graph_entries[role], self.threads,
                                          self._graphs.get(beside) if beside else None)
        except NeuronError as exc:
            if not self.warning:
                raise
            raise NeuronError(f"{exc.problem}; {self.warning.split(': ')[0]}", self.warning.split("; ")[-1]) from None
        return self._graphs[role]

    @classmethod
    def from_bundle(cls, path: str | Path, neuron_lib: str | None = None, npu_profile: str | None = None,
                    neuron_api: str | None = None, neuron_qos: bool = True, neuron_io: str | None = None,
                    neuron_create: str | None = None) -> "DlaBackend":
        bundle = read_bundle(path)
        kind = DlaAttentionBackend if ATTENTION in ((bundle.manifest.get("dla") or {}).get("graphs") or {}) else cls
        return kind(bundle, neuron_lib, npu_profile=npu_profile, neuron_api=neuron_api, neuron_qos=neuron_qos,
                    neuron_io=neuron_io, neuron_create=neuron_create)

    def flush_profile(self) -> None:
        """With the profiler on: release each runtime, so that it writes its report, and create it again
        (device/runner/neuron/npu_profile.py says why, and what a board must confirm). Needed: the runtime writes its
        report only when released. So a profiled request's times include the re-creation: hello says so
        (`npu_profile_note`, device/runner/serve/served_model.py), and the doctor's speed rung never times a profiled
        runner."""
        for role, graph in self._graphs.items():
            point_at(self.npu_profile, role)
            graph.recreate()

    def describe(self) -> dict:
        """What `hello` reports: the runtime library, its version, the API and the path in use, and each graph's
        .dla with its compile flags and its slots as the runtime reports them, all of it on the NPU."""
        version = self.lib.version()
        return {"runtime": "neuron", "library": self.lib.path, **({"library_version": version} if version else {}),
                "api": self.lib.api, "io": self.lib.io, **({"io_note": self.lib.io_note} if self.lib.io_note else {}),
                "create": self.lib.create, "qos": self._graphs["encoder"].graph.qos,
                "compiler_version": self.compiler_version,
                **({"version_warning": self.warning} if self.warning else {}),
                "soc": self.soc, "weights": self.dtype, "cross": self.cross,
                "cache_dtype": str(np.dtype(self.cache_layout.get("dtype", np.float32))),
                "graphs": [g.describe(role) for role, g in self._graphs.items()]}

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return self.encode_window(mel, FULL_WINDOW_S)

    def encode_window(self, mel: np.ndarray, window_s: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The cross state of the mel's first `window_s` (core.model.backend.WindowBackend): [L,1,A',d]."""
        if window_s not in self.windows:
            raise ValueError(f"the {self.name} backend has no {window_s} s window")
        role = window_role(window_s)
        g = self._graphs.get(role) or self._open(role)
        d = self.dims
        out = g.run({"mel": np.asarray(mel).reshape(1, d.n_mels, -1)[:, :, :d.window_frames(window_s)]})
        # kept in the slot's own form (fp16 on the native path): the step takes it back as it is
        first = g.read(out, self._cross_names[0], keep_native=True)
        return (first, None) if self.cross == "absorbed" else (first, g.read(out, "cross_v", keep_native=True))

    def _step_on(self, g: DlaGraph, x, self_k, self_v, cross_k, cross_v, mask) -> tuple:
        if self._mask_fp16 and mask.dtype != np.float16:
            mask = np.maximum(mask, np.float32(MASK_FP16))
        steady, fed = self._cross_names, {}
        if self._cross_window is not None:
            *state, fed["cross_mask"] = self._cross_window.feed(cross_k, cross_v)
            cross_k, cross_v, steady = *state, (*steady, "cross_mask")
        named = {"x": x, "self_k": self_k, "self_v": self_v, "mask": mask,
                 **dict(zip(self._cross_names, (cross_k, cross_v))), **fed}
        out = g.run(named, steady=steady)
        keep = bool(self.cache_layout)      # new K/V in the cache's own dtype
        return out, (g.read(out, "logits"), g.read(out, "new_k", keep), g.read(out, "new_v", keep))

    def step(self, x, self_k, self_v, cross_k, cross_v, mask):
        return self._step_on(self._graphs["decoder_step"], x, self_k, self_v, cross_k, cross_v, mask)[1]

    def full(self, x, cross_k, cross_v, mask):
        return uncached_by_steps(self, x, cross_k, cross_v)

    def close(self) -> None:
        for g in self._graphs.values():
            g.release()


class DlaAttentionBackend(DlaBackend):
    """A bundle compiled with the step's attention variant: also `step_with_attention` (word timings, the
    heatmap, a live stream's commits). The variant's runtime is created when first asked for."""

    def __init__(self, bundle, *args, **kwargs):
        super().__init__(bundle, *args, **kwargs)
        recorded = self.graph_entries[ATTENTION].get("alignment_heads")
        self.alignment_heads = (tuple(tuple(h) for h in recorded) if recorded else alignment_heads(self.dims))

    def step_with_attention(self, x, self_k, self_v, cross_k, cross_v, mask):
        g = self._graphs.get(ATTENTION) or self._open(ATTENTION, beside="decoder_step")
        out, (logits, new_k, new_v) = self._step_on(g, x, self_k, self_v, cross_k, cross_v, mask)
        return logits, new_k, new_v, g.read(out, "attention")


def build(source, *, config, **_) -> DlaBackend:
    """The registry's factory (device/runner/backends.py): a compiled bundle only, on `config.neuron_lib`."""
    if not isinstance(source, (str, Path)):
        raise ModelError("the dla backend runs a compiled bundle, not weights",
                         Fix("export and compile one (`whisperkv export --format tflite --out DIR`, `whisperkv "
                             "compile DIR`), deploy it with `whisperkv deploy --backend tflite --model DIR`, and ",
                             Setting("model", "DIR", "pass")))
    return DlaBackend.from_bundle(source, config.neuron_lib, config.npu_profile, config.neuron_api, config.neuron_qos,
                                  config.neuron_io, config.neuron_create)
