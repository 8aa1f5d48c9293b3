"""fp16 and int8 graphs from fp32 ones (device/toolchain/export.py applies it to whole bundles).

- fp16: every tensor, I/O included, in float16 — what MDLA runs natively.
- int8: ONNX Runtime dynamic quantisation of the constant-weight MatMuls (the FULLY_CONNECTED
  layers, LM head included); activations are quantised at run time. Attention MatMuls
  (two activations) and the Conv layers stay fp32.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from core.errors import ModelError


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
