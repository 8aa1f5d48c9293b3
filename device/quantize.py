"""fp16 and int8 bundles from an fp32 bundle (the porting plan's last phase).

- fp16: every tensor, I/O included, in float16 — what MDLA runs natively.
- int8: ONNX Runtime dynamic quantisation of the constant-weight MatMuls (the FULLY_CONNECTED
  layers, LM head included); activations are quantised at run time. Attention MatMuls
  (two activations) and the Conv layers stay fp32.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from core.errors import ModelError

from .export import GRAPHS, TABLES, read_bundle, write_manifest


def quantize_model(model, dtype: str):
    """An fp32 ModelProto -> its fp16 or int8 counterpart (a new ModelProto)."""
    import onnx

    if dtype == "fp32":
        return model
    if dtype == "fp16":
        from onnxruntime.transformers.float16 import convert_float_to_float16

        return convert_float_to_float16(model, keep_io_types=False, disable_shape_infer=True)
    if dtype == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "in.onnx", Path(tmp) / "out.onnx"
            onnx.save(model, str(src))
            quantize_dynamic(src, dst, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"],
                             extra_options={"MatMulConstBOnly": True})
            return onnx.load(str(dst))
    raise ModelError(f"unknown dtype {dtype!r}", "use fp32, fp16 or int8")


def quantize_bundle(src: str | Path, out: str | Path, dtype: str) -> dict:
    """Read the fp32 bundle at `src`, write the `dtype` bundle to `out` (may be the same directory)."""
    import onnx

    b = read_bundle(src)
    if b.dtype != "fp32":
        raise ModelError(f"{src} is already a {b.dtype} bundle", "quantise from an fp32 bundle")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    graphs = {}
    for key, name in GRAPHS.items():
        q = quantize_model(onnx.load(str(b.path / name)), dtype)
        onnx.save(q, str(out / name))
        graphs[key] = b.manifest["graphs"][key] | {"io_dtype": "float16" if dtype == "fp16" else "float32"}
    if out.resolve() != b.path.resolve():
        for name in (*TABLES.values(), "tokenizer.json"):
            shutil.copyfile(b.path / name, out / name)
    return write_manifest(out, b.dims, dtype, b.manifest["special_tokens"], b.model_sha256,
                          b.manifest["source"], graphs, {"quantized_from": "fp32"})
