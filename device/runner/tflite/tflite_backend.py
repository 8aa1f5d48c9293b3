"""The runner's LiteRT backend: the MTK-form TFLite graphs in the TFLite interpreter.

With `--delegate PATH` an external delegate (one exporting `tflite_plugin_create_delegate`) takes the ops it
supports and the rest run on the Arm CPU one by one; Genio IoT Yocto's Neuron delegate is a stable delegate that
`load_delegate` cannot load (`refuse_stable_delegate`), so on those images the NPU is the dla backend's. Without a
delegate the graphs run on this CPU (XNNPACK). A delegate that cannot be loaded is an error that
names its path: never a silent CPU fallback. `cross` is the form of the cross state
(core/model/backend.py): a bundle's own, else "kv" unless asked. A bundle exported with shorter windows serves
them (core.model.backend.WindowBackend): each window's encoder opened when first asked for, its cross state fed to
the step in the first positions with the step's `cross_mask` hiding the rest (device/runner/tflite/cross_window.py).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import WhisperKVError
from core.model.alignment import alignment_heads
from core.model.backend import check_cross
from core.model.dims import FULL_WINDOW_S, ModelDims
from core.model.kv_cache import uncached_by_steps
from core.model.weights import WhisperWeights
from core.model.whisper import NEG_INF
from device.runner.bundle import read_bundle, window_role
from device.runner.tflite.cross_window import CrossWindow
from device.runner.tflite.int_slots import from_slot, to_slot
from device.runner.tflite.litert import load_interpreter


class DelegateError(WhisperKVError):
    code = "model_missing"


def refuse_stable_delegate(path: str) -> None:
    """A library exporting only `TFL_TheStableDelegate` is a TFLite *stable* delegate (MediaTek's
    /usr/lib/libneuron_stable_delegate.so on Genio IoT Yocto). load_delegate looks for the external-delegate
    entry point `tflite_plugin_create_delegate` and cannot load it (tensorflow/tensorflow#79111)."""
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return      # load_delegate says what is wrong with the file
    if hasattr(lib, "TFL_TheStableDelegate") and not hasattr(lib, "tflite_plugin_create_delegate"):
        raise DelegateError(f"{path} is a TFLite stable delegate (it exports TFL_TheStableDelegate, not "
                            "tflite_plugin_create_delegate), which tflite_runtime's load_delegate cannot load",
                            "reach the NPU through the Neuron runtime instead: --backend dla with a compiled "
                            "bundle (whisperkv compile), and no --delegate")


@dataclass
class OpPlacement:
    """How many of a graph's ops the delegate took, and how many stay on the CPU."""

    graph: str
    total: int
    delegated: int
    delegate_kernels: int

    @property
    def cpu(self) -> int:
        return self.total - self.delegated

    def to_dict(self) -> dict:
        return {"graph": self.graph, "ops": self.total, "delegated": self.delegated, "cpu": self.cpu,
                "delegate_kernels": self.delegate_kernels}


def op_placement(graph: str, ops: list[dict]) -> OpPlacement:
    """From the interpreter's op details: a DELEGATE node replaces a connected partition of the
    original ops, so walk back from its outputs to its inputs and count what it covers."""
    original = [o for o in ops if o["op_name"] != "DELEGATE"]
    producer = {int(t): o["index"] for o in original for t in o["outputs"]}
    by_index = {o["index"]: o for o in original}
    covered: set[int] = set()
    kernels = [o for o in ops if o["op_name"] == "DELEGATE"]
    for k in kernels:
        boundary = {int(t) for t in k["inputs"]}
        todo = [int(t) for t in k["outputs"]]
        while todo:
            t = todo.pop()
            if t in boundary or t not in producer or producer[t] in covered:
                continue
            covered.add(producer[t])
            todo += [int(i) for i in by_index[producer[t]]["inputs"] if i >= 0]
    return OpPlacement(graph, len(original), len(covered), len(kernels))


class _Graph:
    """One interpreter, its tensors found by name (the exporter names them after docs/protocol.md)."""

    def __init__(self, name: str, model: bytes, threads: int, delegate_path: str | None):
        Interpreter, load_delegate, resolver, self.package = load_interpreter()
        kw: dict = {"model_content": model, "num_threads": threads}
        if delegate_path:
            refuse_stable_delegate(delegate_path)
            try:
                kw["experimental_delegates"] = [load_delegate(delegate_path)]
            except (OSError, ValueError, RuntimeError) as exc:
                raise DelegateError(f"cannot load the TFLite delegate {delegate_path} ({exc})",
                                    "check the path on the board, or run without --delegate to use the CPU "
                                    "(on Genio IoT Yocto the NPU is the dla backend's)") from None
            if resolver is not None:   # so that every DELEGATE node below is the external delegate's
                kw["experimental_op_resolver_type"] = resolver.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        self.interp = Interpreter(**kw)
        self.interp.allocate_tensors()
        self.inputs = {d["name"]: d for d in self.interp.get_input_details()}
        self.outputs = {d["name"]: d for d in self.interp.get_output_details()}
        self.placement = op_placement(name, self.interp._get_ops_details())

    def set(self, name: str, value: np.ndarray) -> None:
        d = self.inputs[name]
        self.interp.set_tensor(d["index"], _quantized(value, d))

    def run(self, *names: str) -> list[np.ndarray]:
        self.interp.invoke()
        return [_dequantized(self.interp.get_tensor(self.outputs[n]["index"]), self.outputs[n]) for n in names]


def _quantized(value, d: dict) -> np.ndarray:
    value = np.ascontiguousarray(value, np.float32)
    return to_slot(value, d["dtype"], *d["quantization"]) if np.issubdtype(d["dtype"], np.integer) else value


def _dequantized(value: np.ndarray, d: dict) -> np.ndarray:
    return from_slot(value, *d["quantization"]) if np.issubdtype(d["dtype"], np.integer) else value


class TfliteBackend:
    """Encoder and decoder step in the TFLite interpreter; embeddings are looked up on the CPU."""

    name = "tflite"

    def __init__(self, dims: ModelDims, sha256: str, encoder: bytes, step: bytes, token_embedding: np.ndarray,
                 positional_embedding: np.ndarray, delegate: str | None = None, threads: int = 2,
                 dtype: str = "fp32", cross: str = "kv", window_encoders: dict[int, Path] | None = None):
        """`window_encoders`: each shorter window's encoder .tflite, served where the step takes `cross_mask`."""
        self.dims, self.sha256, self.dtype, self.delegate = dims, sha256, dtype, delegate
        self.cross = check_cross(cross)
        self._cross_names = ("F",) if cross == "absorbed" else ("cross_k", "cross_v")
        self.token_embedding, self.positional_embedding = token_embedding, positional_embedding
        self._encoder = _Graph("encoder", encoder, threads, delegate)
        self._step = _Graph("decoder_step", step, threads, delegate)
        masked = "cross_mask" in self._step.inputs
        self._window_files = (window_encoders or {}) if masked else {}
        self.windows = tuple(sorted({FULL_WINDOW_S, *self._window_files}))
        self._encoders = {FULL_WINDOW_S: self._encoder}
        self._cross_window = CrossWindow(dims.n_audio_ctx, NEG_INF) if masked else None
        self.interpreter = self._encoder.package
        self._cross = None      # the cross state last fed: the step graph keeps its inputs between calls
        # The interpreter holds the step bytes anyway; the attention variant is built from their weights.
        self._step_bytes, self._threads, self._step_attention = step, threads, None
        self.alignment_heads = alignment_heads(dims)

    @classmethod
    def from_weights(cls, weights: WhisperWeights, delegate: str | None = None, threads: int = 2,
                     cross: str = "kv") -> "TfliteBackend":
        """Graphs built in memory (fp32), as `whisperkv export --format tflite [--cross CROSS]` would write them."""
        from device.graphs.tflite_graphs import build_decoder_step_tflite, build_encoder_tflite  # a board: never

        p, dims = weights.params, weights.dims
        backend = cls(dims, weights.sha256, build_encoder_tflite(p, dims, cross=cross),
                      build_decoder_step_tflite(p, dims, cross=cross), p["decoder.token_embedding.weight"],
                      p["decoder.positional_embedding"], delegate, threads, cross=cross)
        backend.alignment_heads = alignment_heads(dims, weights.files)
        return backend

    @classmethod
    def from_bundle(cls, path: str | Path, delegate: str | None = None, threads: int = 2) -> "TfliteBackend":

        b = read_bundle(path)
        graphs = b.manifest["graphs"]
        shorter = {w: b.graph_path(window_role(w), "tflite") for w in b.windows if w != FULL_WINDOW_S}
        return cls(b.dims, b.weights_sha256, b.graph_path("encoder", "tflite").read_bytes(),
                   b.graph_path("decoder_step", "tflite").read_bytes(), b.token_embedding, b.positional_embedding,
                   delegate, threads, dtype=graphs["decoder_step_tflite"].get("weights", "fp32"), cross=b.cross,
                   window_encoders=shorter)

    def describe(self) -> dict:
        """What `hello` reports: the interpreter, the delegate, and where each graph's ops run."""
        return {"interpreter": self.interpreter, "delegate": self.delegate, "weights": self.dtype, "cross": self.cross,
                "quantized": any(np.issubdtype(d["dtype"], np.integer)
                                 for g in (self._encoder, self._step) for d in g.inputs.values()),
                "ops": [self._encoder.placement.to_dict(), self._step.placement.to_dict()]}

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return self.encode_window(mel, FULL_WINDOW_S)

    def encode_window(self, mel: np.ndarray, window_s: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The cross state of the mel's first `window_s` (core.model.backend.WindowBackend): [L,1,A',d]."""
        if window_s not in self.windows:
            raise ValueError(f"the {self.name} backend has no {window_s} s window")
        g = self._encoders.get(window_s)
        if g is None:
            g = self._encoders[window_s] = _Graph(window_role(window_s), self._window_files[window_s].read_bytes(),
                                                  self._threads, self.delegate)
        d = self.dims
        g.set("mel", np.asarray(mel).reshape(1, d.n_mels, -1)[:, :, :d.window_frames(window_s)])
        out = [o.copy() for o in g.run(*self._cross_names)]
        return (out[0], None) if self.cross == "absorbed" else (out[0], out[1])

    def _set_cross(self, g: _Graph, last, cross_k, cross_v):
        """Feed the window's cross state (37 MB of K/V, or 3 MB of F) once per window, not once per token;
        returns what is fed now, for the next call's `last`. A shorter window's goes in padded, with its mask."""
        if last is None or last[0] is not cross_k or last[1] is not cross_v:
            state, fed = (cross_k, cross_v), {}
            if self._cross_window is not None:
                *state, fed["cross_mask"] = self._cross_window.feed(cross_k, cross_v)
            for name, value in {**dict(zip(self._cross_names, state)), **fed}.items():
                g.set(name, value)
        return cross_k, cross_v

    def step(self, x, self_k, self_v, cross_k, cross_v, mask):
        g = self._step
        self._cross = self._set_cross(g, self._cross, cross_k, cross_v)
        g.set("x", x)
        g.set("self_k", self_k)
        g.set("self_v", self_v)
        g.set("mask", mask)
        logits, new_k, new_v = g.run("logits", "new_k", "new_v")
        return logits.copy(), new_k.copy(), new_v.copy()

    def step_with_attention(self, x, self_k, self_v, cross_k, cross_v, mask):
        """step() through the attention variant of the step graph (core.model.backend.AttentionBackend),
        built on first use from the step graph's own weights: a second interpreter, so ordinary steps
        pay nothing. Like step(), it is fed the window's cross K/V only when they change."""
        if self._step_attention is None:   # the graph emitters: only when attention is first asked for
            if self.dtype not in ("fp32", "fp16"):
                raise WhisperKVError(f"the attention view is built from float weights, and this bundle's are {self.dtype}",
                                     "export a float bundle (--dtype fp32 or fp16) to see where the decoder looks")
            # the graph emitters: only when attention is first asked for, never for a board's ordinary steps
            from device.graphs.tflite_graphs import build_decoder_step_tflite
            from device.graphs.tflite_read import params_from_tflite

            model = build_decoder_step_tflite(params_from_tflite(self._step_bytes), self.dims, self.dtype,
                                              self.alignment_heads, self.cross, self._cross_window is not None)
            self._step_attention, self._attention_cross = _Graph("decoder_step_attention", model, self._threads,
                                                                 self.delegate), None
        g = self._step_attention
        self._attention_cross = self._set_cross(g, self._attention_cross, cross_k, cross_v)
        for name, value in (("x", x), ("self_k", self_k), ("self_v", self_v), ("mask", mask)):
            g.set(name, value)
        return tuple(o.copy() for o in g.run("logits", "new_k", "new_v", "attention"))

    def full(self, x, cross_k, cross_v, mask):
        return uncached_by_steps(self, x, cross_k, cross_v)


def build(source: WhisperWeights | str | Path, *, config, cross: str = "kv", delegate: str | None = None,
          **_) -> TfliteBackend:
    """The registry's factory (device/runner/backends.py): graphs built from weights, or a bundle's own."""
    if isinstance(source, WhisperWeights):
        return TfliteBackend.from_weights(source, delegate, config.team, cross=cross)
    return TfliteBackend.from_bundle(source, delegate, config.team)
