"""fp16 and int8 graphs from fp32 ones (device/toolchain/export.py applies it to whole bundles).

- fp16: every tensor, I/O included, in float16 — what MDLA runs natively.
- int8: ONNX Runtime dynamic quantisation of the constant-weight MatMuls (the FULLY_CONNECTED
  layers, LM head included); activations are quantised at run time. Attention MatMuls
  (two activations) and the Conv layers stay fp32.
- int8b: block-wise int8 weights (ONNX Runtime's MatMulNBits, 8 bits, one symmetric scale per 16 weights of
  a column) on the same MatMuls; the activations are quantised per block at run time too (accuracy level 4,
  the only 8-bit MatMulNBits kernel ONNX Runtime has for x86 — the fp32-compute one is ~30x slower). A scale
  per 16 weights instead of one per tensor keeps it close enough to fp32 that the tokens of every bundled
  clip equal the reference's (tests/device/runner/test_auto_backend.py), where int8 differs on two. With
  32 per scale one comma flipped: the reference's margin there is 0.08 in logits. Near-ties like that one
  can still go the other way on other speech; `onnx` is the exact backend.
  Quantised deterministically from the fp32 weights, so a graph rebuilt from them gets the same numbers.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import onnx

from core.errors import ModelError


def quantize_model(model, dtype: str):
    """An fp32 ModelProto -> its fp16 or int8 counterpart (a new ModelProto)."""
    if dtype == "fp32":
        return model
    if dtype == "fp16":
        # ONNX Runtime's quantisers (~0.8 s): only for the dtype asked for
        from onnxruntime.transformers.float16 import convert_float_to_float16

        return convert_float_to_float16(model, keep_io_types=False, disable_shape_infer=True)
    if dtype == "int8":
        # ONNX Runtime's quantisers (~0.8 s): only for the dtype asked for
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "in.onnx", Path(tmp) / "out.onnx"
            onnx.save(model, str(src))
            quantize_dynamic(src, dst, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"],
                             extra_options={"MatMulConstBOnly": True})
            return onnx.load(str(dst))
    if dtype == "int8b":
        # ONNX Runtime's quantisers (~0.8 s): only for the dtype asked for
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)  # a line per node
        q = MatMulNBitsQuantizer(model, bits=8, block_size=16, is_symmetric=True, accuracy_level=4)
        q.process()
        return q.model.model
    raise ModelError(f"unknown dtype {dtype!r}", "use fp32, fp16, int8 or int8b")
