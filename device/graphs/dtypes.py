"""Which graph dtypes are made from the fp32 params by a deterministic pass (device/graphs/quantize.py), apart from
the quantisers so that a runner started from its start-up cache reads it without importing onnx."""
from __future__ import annotations

# Graphs of these dtypes are made from the fp32 params by a deterministic pass, so the uncached reference, the
# attention variant and the shorter windows' encoders are rebuilt from those params and quantised the same way:
# one set of numbers.
FROM_FP32 = ("fp32", "int8b")
