"""What MDLA 5.3 (the MT8371's NPU, MT8189 family) runs: the one table both the ONNX and the TFLite checks use.

Sources, cited per entry by key:
- "np8": NeuroPilot SDK 8.0.10 documentation, MDLA 5.3 operator support and limits, as compiled in
  the public repository superLin006/MTK_model_zoo (mtk_mdla_operators.md: 65 supported and 22
  unsupported TFLite builtin ops, rank 0-4, static shapes only).
- "np8-types": the same documentation's data types: fp16, int8/uint8, int16; fp32 only when the
  compiler relaxes it to fp16 (`ncc-tflite --relax-fp32`, the flag the public MT8371 Whisper port
  compiles with).
- "litert-mtk": LiteRT's MediaTek compiler-plugin notes: INT64 tensors only as constants.
Names are TFLite builtin operator names (the ONNX check maps ONNX ops onto them first).
"""
from __future__ import annotations

SOURCES = {
    "np8": "NeuroPilot SDK 8.0.10 docs, MDLA 5.3 operator list (compiled in superLin006/MTK_model_zoo)",
    "np8-types": "NeuroPilot SDK 8.0.10 docs, MDLA 5.3 data types (fp32 only via --relax-fp32)",
    "litert-mtk": "LiteRT MediaTek compiler-plugin notes (INT64 only as constants)",
}

MAX_RANK = 4                     # np8: tensors of rank 0-4; no rank-5 KV caches

# Supported builtin ops -> source. The documentation's MIRRORPAD and RESIZE_NEAREST are spelled
# as TFLite's builtin enum spells them; its "LSTM (QLSTM)" is the LSTM builtin.
SUPPORTED: dict[str, str] = {op: "np8" for op in (
    "ABS", "ADD", "ARG_MAX", "ARG_MIN", "AVERAGE_POOL_2D", "BATCH_MATMUL", "BATCH_TO_SPACE_ND", "CAST",
    "CONCATENATION", "CONV_2D", "DEQUANTIZE", "DEPTH_TO_SPACE", "DEPTHWISE_CONV_2D", "DIV", "ELU", "EXP",
    "EXPAND_DIMS", "FULLY_CONNECTED", "GELU", "HARD_SWISH", "L2_NORMALIZATION", "L2_POOL_2D", "LOGISTIC",
    "LSTM", "MAXIMUM", "MAX_POOL_2D", "MEAN", "MINIMUM", "MIRROR_PAD", "MUL", "NEG", "PACK", "PAD", "POW",
    "PRELU", "QUANTIZE", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RELU_N1_TO_1", "RESHAPE",
    "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "RSQRT", "SLICE", "SOFTMAX", "SPACE_TO_BATCH_ND",
    "SPACE_TO_DEPTH", "SPLIT", "SPLIT_V", "SQRT", "SQUARE", "SQUARED_DIFFERENCE", "SQUEEZE",
    "STRIDED_SLICE", "SUB", "SUM", "TANH", "TILE", "TRANSPOSE", "TRANSPOSE_CONV", "UNPACK")}

# Documented as unsupported (np8), with the way round it that the MTK form uses.
_CPU_SEARCH = "keep the search (argmax, top-k, log-softmax) on the runner CPU"
_CMP = "no comparisons on MDLA: precompute the mask on the CPU and add it (0 / -1e9), never masked_fill"
UNSUPPORTED: dict[str, str] = {
    "GATHER": "GATHER is not supported: look embeddings up on the runner CPU and feed the result",
    "GATHER_ND": "GATHER is not supported: index on the runner CPU",
    "SELECT": "SELECT is not supported: " + _CMP, "SELECT_V2": "SELECT is not supported: " + _CMP,
    "EQUAL": _CMP, "NOT_EQUAL": _CMP, "GREATER": _CMP, "GREATER_EQUAL": _CMP, "LESS": _CMP,
    "LESS_EQUAL": _CMP, "LOGICAL_AND": _CMP, "LOGICAL_OR": _CMP, "LOGICAL_NOT": _CMP, "REDUCE_ANY": _CMP,
    "TOPK_V2": "TOPK_V2 is not supported: " + _CPU_SEARCH,
    "LOG_SOFTMAX": "LOG_SOFTMAX is not supported: " + _CPU_SEARCH,
    "LOG": "LOG is not supported: " + _CPU_SEARCH,
    "FILL": "FILL is not supported: write the constant into the graph",
    "CEIL": "CEIL is not supported", "FLOOR": "FLOOR is not supported", "ROUND": "ROUND is not supported",
    "LEAKY_RELU": "LEAKY_RELU is not supported", "CHANNEL_SHUFFLE": "CHANNEL_SHUFFLE is not supported",
    "LOCAL_RESPONSE_NORMALIZATION": "LOCAL_RESPONSE_NORMALIZATION is not supported",
}
UNKNOWN_FIX = "not on MDLA 5.3's documented operator list: rewrite it with the listed ops"

# Tensor types (TFLite TensorType names) -> source. Anything else (bool, string, float64, …) fails.
ACTIVATION_TYPES: dict[str, str] = {"FLOAT32": "np8-types", "FLOAT16": "np8-types", "INT8": "np8-types",
                                    "UINT8": "np8-types", "INT16": "np8-types"}
# Allowed only on constants: shape/axis/perm operands (INT32) and INT64 constants (the int16 path's biases).
CONST_ONLY_TYPES: dict[str, str] = {"INT32": "np8-types", "INT64": "litert-mtk"}

# Quantized forms of the ops with weights, (activation type, weight type) -> source: the MDLA computes in
# int8/uint8 and int16 ("np8-types") and converts between float and integer with QUANTIZE/DEQUANTIZE ("np8").
# int16 activations with int8 weights is TFLite's 16x8 scheme (the a16w8 graphs, int64 biases); the
# documentation lists the types, not this pairing, so a board's ncc-tflite confirms it.
WEIGHTED_OPS = ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")
QUANTIZED_FORMS: dict[tuple[str, str], str] = {("INT8", "INT8"): "np8-types", ("UINT8", "UINT8"): "np8-types",
                                               ("INT16", "INT8"): "np8-types", ("INT16", "INT16"): "np8-types"}


def is_supported(op: str) -> bool:
    return op in SUPPORTED


def fix_for(op: str) -> str:
    return UNSUPPORTED.get(op, f"{op} is {UNKNOWN_FIX}")
