"""The decoder step in C (native_step.c, device/runner/native/library.py) called through ctypes, on onnx-int8b's
weights.

Why: the ONNX Runtime step is bound by the ~100 MB it reads a token at step 100, at ~75 % of the memory's speed
over its ~250 nodes. One C call runs the whole step at the memory's full speed, and keeps the cross K/V in int8
with an fp32 scale per position and head (a quarter of the bytes, packed once a window). docs/benchmarks.md has
the figures. OpenMP runs the step on every core.
"""
from __future__ import annotations

import ctypes as C
from pathlib import Path

import numpy as np

from core.errors import ModelError
from core.model.dims import ModelDims
from core.model.kv_cache import to_head_major
from device.runner.native.library import open_library

KINDS = ("qkv", "attn_out", "cross_q", "cross_out", "fc1", "fc2")
BLOCK = 16           # inputs per scale: onnx-int8b's MatMulNBits blocks (device/graphs/quantize.py)
DH = 64              # dims a head, fixed in the C code (native_step.h)


def quantize_blocks(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[out, in] fp32 -> int8 [out, in] and fp32 scales [out, in/16], as ONNX Runtime's symmetric 8-bit
    MatMulNBits quantiser makes them, so the weights are onnx-int8b's bit for bit and its graphs (the uncached
    reference, the prefill) share them: the block's extreme value (the minimum on a tie) maps to -128, and each
    weight times the scale's fp32 reciprocal, plus the zero point 128, is rounded half away from zero."""
    out, n_in = w.shape
    blocks = np.ascontiguousarray(w, np.float32).reshape(out, n_in // BLOCK, BLOCK)
    hi, lo = blocks.max(-1), blocks.min(-1)
    scale = (np.where(np.abs(hi) > np.abs(lo), hi, lo) / np.float32(-128.0)).astype(np.float32)
    inverse = np.divide(np.float32(1), scale, out=np.zeros_like(scale), where=scale != 0)
    shifted = blocks * inverse[..., None] + np.float32(128)           # fp32 arithmetic, as in the C++
    floor = np.floor(shifted)
    rounded = np.where(shifted - floor >= np.float32(0.5), floor + 1, floor)   # exact: never adds 0.5 in fp32
    q = (np.clip(rounded, 0, 255) - 128).astype(np.int8)
    return q.reshape(out, n_in), scale


def native_weights(params: dict[str, np.ndarray], dims: ModelDims) -> dict[str, np.ndarray]:
    """The step's arrays from the canonical fp32 params: per kind (KINDS) q [L,out,in] int8, s [L,out,in/16],
    b [L,out]; ln [L,6,d]; ln_f [2,d]; head_q, head_s (the tied embedding)."""
    L, d = dims.n_text_layer, dims.n_text_state
    block = lambda i, name: params[f"decoder.blocks.{i}.{name}"]
    mats = {
        "qkv": lambda i: (np.concatenate([block(i, f"attn.{n}.weight") for n in ("query", "key", "value")]),
                          np.concatenate([block(i, "attn.query.bias"), np.zeros(d, np.float32),
                                          block(i, "attn.value.bias")])),
        **{kind: (lambda i, n=name: (block(i, n + ".weight"), block(i, n + ".bias")))
           for kind, name in (("attn_out", "attn.out"), ("cross_q", "cross_attn.query"),
                              ("cross_out", "cross_attn.out"), ("fc1", "mlp.0"), ("fc2", "mlp.2"))},
    }
    arrays: dict[str, np.ndarray] = {}
    for kind, get in mats.items():
        layers = [get(i) for i in range(L)]
        qs = [quantize_blocks(w) for w, _ in layers]
        arrays[f"{kind}_q"] = np.stack([q for q, _ in qs])
        arrays[f"{kind}_s"] = np.stack([s for _, s in qs])
        arrays[f"{kind}_b"] = np.stack([b for _, b in layers]).astype(np.float32)
    arrays["ln"] = np.stack([np.stack([block(i, f"{n}.{p}") for n in ("attn_ln", "cross_attn_ln", "mlp_ln")
                                       for p in ("weight", "bias")]) for i in range(L)]).astype(np.float32)
    arrays["ln_f"] = np.stack([params["decoder.ln.weight"], params["decoder.ln.bias"]]).astype(np.float32)
    arrays["head_q"], arrays["head_s"] = quantize_blocks(params["decoder.token_embedding.weight"])
    return arrays


def save_weights(arrays: dict[str, np.ndarray], directory: Path) -> None:
    for name, a in arrays.items():
        np.save(directory / f"native.{name}.npy", a)


def load_weights(directory: Path) -> dict[str, np.ndarray]:
    """Memory-mapped: the pages are the file's, read in once, never a second copy."""
    return {p.name[len("native."):-len(".npy")]: np.load(p, mmap_mode="r").view(np.ndarray)
            for p in sorted(directory.glob("native.*.npy"))}


class _QMat(C.Structure):
    _fields_ = [("q", C.c_void_p), ("s", C.c_void_p), ("b", C.c_void_p), ("out", C.c_int), ("inn", C.c_int)]


class _Model(C.Structure):
    _fields_ = ([(n, C.c_int) for n in ("n_layer", "n_head", "d", "d_ff", "n_vocab", "n_audio", "a_pad")]
                + [(n, C.POINTER(_QMat)) for n in KINDS]
                + [("ln", C.c_void_p), ("ln_f", C.c_void_p), ("head", _QMat)]
                + [(n, C.c_void_p) for n in ("x", "qkv_out", "q", "att", "ff")])


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def _aligned(n: int) -> np.ndarray:
    """n zero float32 at a 64-byte boundary (native_step.c: why alignment keeps its sums the same run to run)."""
    buf = np.zeros(n + 16, np.float32)
    start = (-buf.ctypes.data % 64) // 4
    return buf[start:start + n]


class NativeStep:
    """The step over `arrays` (native_weights) in the library at `library`: called like Backend.step, with the
    cross K/V head-major fp32 as OnnxBackend.encode gives them."""

    def __init__(self, arrays: dict[str, np.ndarray], dims: ModelDims, library: Path, threads: int = 0):
        """`threads`: OpenMP's team (0: one a core)."""
        if dims.n_text_state // dims.n_text_head != DH:
            raise ModelError(f"the native step needs {DH} dims a head, not {dims.n_text_state // dims.n_text_head}",
                             "use --backend onnx-int8b")
        self.dims, self.arrays = dims, arrays
        self.lib = open_library(library, {"qmat": C.sizeof(_QMat), "model": C.sizeof(_Model)})
        self.lib.wkv_step.argtypes = [C.c_void_p] * 4 + [C.c_int] + [C.c_void_p] * 9
        self.lib.wkv_pack_cross.argtypes = [C.c_void_p, C.c_void_p] + [C.c_int] * 4 + [C.c_void_p] * 4
        self.lib.wkv_set_threads(threads)
        L, d, A = dims.n_text_layer, dims.n_text_state, dims.n_audio_ctx
        self.a_pad = -(-A // 16) * 16
        self._scratch = [_aligned(n) for n in (d, 3 * d, d, d, 4 * d)]
        self._mats = {kind: (_QMat * L)(*(self._qmat(arrays[f"{kind}_q"][i], arrays[f"{kind}_s"][i],
                                                      arrays[f"{kind}_b"][i]) for i in range(L))) for kind in KINDS}
        self._model = _Model(L, dims.n_text_head, d, 4 * d, dims.n_vocab, A, self.a_pad,
                             *(self._mats[k] for k in KINDS), _ptr(arrays["ln"]), _ptr(arrays["ln_f"]),
                             self._qmat(arrays["head_q"], arrays["head_s"], None), *map(_ptr, self._scratch))
        self._packed: tuple = (None, None, None)   # (cross_k, cross_v, their int8 packing) of the current window

    @staticmethod
    def _qmat(q: np.ndarray, s: np.ndarray, b: np.ndarray | None) -> _QMat:
        return _QMat(_ptr(q), _ptr(s), None if b is None else _ptr(b), q.shape[0], q.shape[1])

    def _pack(self, cross_k: np.ndarray, cross_v: np.ndarray) -> tuple[np.ndarray, ...]:
        """The window's cross K/V as the C step reads them, packed once a window: keys transposed [L,H,64,A'] and
        values [L,H,A',64] in int8, each with an fp32 scale per position [L,H,A'] (A' = A padded to 16).
        Head-major [L,H,A,64] (OnnxBackend.encode) or stacked [L,1,A,d] (another backend's)."""
        k0, v0, packed = self._packed
        if k0 is cross_k and v0 is cross_v:
            return packed
        L, H, A = self.dims.n_text_layer, self.dims.n_text_head, cross_k.shape[2]   # A: a shorter window's, or 1500
        a_pad = -(-A // 16) * 16
        k, v = (np.ascontiguousarray(to_head_major(t, H) if t.shape[1] == 1 else t, np.float32)
                for t in (cross_k, cross_v))
        kt, vo = np.empty((L, H, DH, a_pad), np.int8), np.empty((L, H, a_pad, DH), np.int8)
        ks, vs = np.empty((L, H, a_pad), np.float32), np.empty((L, H, a_pad), np.float32)
        self.lib.wkv_pack_cross(_ptr(k), _ptr(v), L, H, A, a_pad, _ptr(kt), _ptr(ks), _ptr(vo), _ptr(vs))
        self._packed = (cross_k, cross_v, (kt, ks, vo, vs))
        return self._packed[2]

    def __call__(self, x, self_k, self_v, cross_k, cross_v, mask, attention: bool = False):
        """x [1,1,d], self_k/self_v [L,H,cap,64] (C-contiguous), cross K/V [L,H,A,64], mask [1,1,1,cap+1] ->
        logits [1,1,V], new_k/new_v [L,1,1,d], and with `attention` every head's cross-attention weights
        [L,H,A] (new arrays each call: a caller may keep a step's logits)."""
        kt, ks, vo, vs = self._pack(cross_k, cross_v)
        # The window's positions: the step attends to them alone (core/model/dims.py, WINDOWS_S).
        self._model.n_audio, self._model.a_pad = cross_k.shape[2], ks.shape[-1]
        x, mask, cap = np.ascontiguousarray(x), np.ascontiguousarray(mask), self_k.shape[2]   # held over the call
        if not (self_k.flags.c_contiguous and self_v.flags.c_contiguous and self_k.shape[1] == self.dims.n_text_head
                and mask.size == cap + 1 and x.dtype == np.float32 and mask.dtype == np.float32):
            raise ValueError("the native step takes a head-major, C-contiguous fp32 cache and a mask of cap+1")
        d = self.dims
        logits = np.empty((1, 1, d.n_vocab), np.float32)
        new_k, new_v = np.empty((d.n_text_layer, 1, 1, d.n_text_state), np.float32), np.empty(
            (d.n_text_layer, 1, 1, d.n_text_state), np.float32)
        weights = np.empty((d.n_text_layer, d.n_text_head, cross_k.shape[2]), np.float32) if attention else None
        self.lib.wkv_step(C.addressof(self._model), _ptr(x), _ptr(self_k), _ptr(self_v), cap,
                          _ptr(mask), _ptr(kt), _ptr(ks), _ptr(vo), _ptr(vs), _ptr(logits), _ptr(new_k),
                          _ptr(new_v), None if weights is None else _ptr(weights))
        return (logits, new_k, new_v) if weights is None else (logits, new_k, new_v, weights)
