"""What one decode step reads, counted from its TFLite step graph: constants, the caches and the logits
(bench/absorbed.py prints it by form, bench/bytes_by_dtype.py by dtype)."""
from __future__ import annotations

from dataclasses import dataclass

from device.graphs.tflite_read import io, operators, tensors

VIEWS = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"}                  # no data moved
LAYOUT = {"TRANSPOSE", "SPLIT", "SPLIT_V", "SLICE", "CONCATENATION"}   # copies of the data they read
SELF_INPUTS, CROSS_INPUTS = ("self_k", "self_v"), ("cross_k", "cross_v", "F")


@dataclass
class StepBytes:
    """Bytes one decode step reads, at 4 bytes an element (fp32 graph); `scaled` for another dtype."""
    weights: int          # every constant of the step graph
    self_once: int        # self_k + self_v, all 448 slots (the graph is static: the mask hides the unused)
    cross_once: int       # each distinct cross tensor read once (kv: 12 x [1500, d]; absorbed: F once)
    self_folded: int      # every compute op's reads of cache data (layout ops folded into their consumers)
    cross_folded: int
    self_op: int          # every non-view op's reads of cache data, plus the layout copies it writes
    cross_op: int
    float_weights: int = 0    # the constants stored as FLOAT32 (all of them in the fp32 graph)
    logits: int = 0           # the logits output

    def total(self, count: str, itemsize: int = 2) -> float:
        """Bytes per step at `itemsize` bytes an element, the caches counted `count` (once, folded, op)."""
        return (self.weights + getattr(self, f"self_{count}") + getattr(self, f"cross_{count}")) * itemsize / 4


def step_bytes(step_tflite: bytes) -> StepBytes:
    """Counted from a TFLite step graph (fp32, or an integer one as written: each tensor at its own dtype):
    its constants, its inputs, and its ops' reads of them."""
    ts = tensors(step_tflite)
    inputs = io(step_tflite)["inputs"]
    by_name = {t.name: t for t in ts}
    weights = sum(t.nbytes or 0 for t in ts if t.const)
    source: dict[int, str] = {by_name[n].index: ("self" if n in SELF_INPUTS else "cross")
                              for n in inputs if n in SELF_INPUTS + CROSS_INPUTS}
    op_by_op, folded = {"self": 0, "cross": 0}, {"self": 0, "cross": 0}
    for op in operators(step_tflite):
        kinds = {source[i] for i in op.inputs if i in source}
        if op.op in VIEWS or op.op in LAYOUT:
            for o in op.outputs:                   # the cache in another layout is still the cache
                if kinds:
                    source[o] = next(iter(kinds))
        if op.op in VIEWS:
            continue
        for i in op.inputs:
            if i in source:
                op_by_op[source[i]] += ts[i].nbytes or 0
                if op.op not in LAYOUT:
                    folded[source[i]] += ts[i].nbytes or 0
        if op.op in LAYOUT and kinds:
            op_by_op[next(iter(kinds))] += sum(ts[o].nbytes or 0 for o in op.outputs)
    once = {kind: sum(by_name[n].nbytes for n in inputs if n in names)
            for kind, names in (("self", SELF_INPUTS), ("cross", CROSS_INPUTS))}
    return StepBytes(weights, once["self"], once["cross"], folded["self"], folded["cross"], op_by_op["self"],
                     op_by_op["cross"], sum(t.nbytes or 0 for t in ts if t.const and t.dtype == "FLOAT32"),
                     by_name["logits"].nbytes or 0)
