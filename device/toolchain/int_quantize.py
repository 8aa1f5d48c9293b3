"""Integer TFLite graphs for the MDLA: fp32 graphs quantized by Google's ai-edge-quantizer.

Recipes (`ai_edge_quantizer.recipe`, static range quantization, calibrated on device/toolchain/calibration.py):
- a16w8: int16 activations, int8 channelwise weights (`static_wi8_ai16`), every op the quantizer takes but
  the layer norms (PRESETS);
- a8w8: int8 activations, int8 channelwise weights (`static_wi8_ai8`), the layer norms likewise in float;
- mixed: the encoder not quantized (fp16 weights, computed in fp16 under --relax-fp32; it runs once a 30 s
  window), the decoder step by MIXED, chosen on held-out speech by bench/int_sensitivity.py for each cross form:
  its head (the LM head, half the step's weights) a16w8, with `kv` also its first two blocks; the rest in float.
A recipe may also leave the graph in float and quantize some groups only (`Recipe.parse`).
Every layer norm stays in float (LAYER_NORMS; fp32, which `ncc-tflite --relax-fp32` computes in fp16) behind
QUANTIZE/DEQUANTIZE, as would any op the quantizer has no integer form for: `float_ops()` lists them. (Its
square is a MUL, as device/graphs/tflite_graphs.py writes it, not SQUARED_DIFFERENCE, which the quantizer has no
integer form for, so a recipe can still quantize them: `a16w8,layer_norm=16`.)

Layer groups name the step graph's ops by where they sit: `block0`…`block5` (a decoder block, from its
first layer norm to the next block's), `head` (the final layer norm and the LM head); the encoder's
ops are one group, `encoder`. `group_ops()` maps a graph's op output names onto them, so a recipe
can quantize one group at a time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from core.errors import ModelError
from device.graphs import tflite_read as R

INT_DTYPES = ("a16w8", "a8w8", "mixed")
LOGITS_HEADROOM = 3.0
EXTRA_FIX = "pip install 'whisperkv-studio[export]' (ai-edge-quantizer, for the integer TFLite graphs)"
# The recipe specs (Recipe.parse) the dtypes name, chosen on held-out speech (bench/int_sensitivity.py,
# docs/benchmarks.md). The layer norms stay in float: a norm's variance is one number a token and varies widely
# from token to token, so on one int16 scale the small ones lose their precision and RSQRT's error reached 4 %
# (a16w8 on held-out speech: mean KL 0.094 with them quantized, 0.012 in float).
PRESETS = {"a16w8": "a16w8,layer_norm=float", "a8w8": "a8w8,layer_norm=float"}
# What mixed quantizes each graph to, by cross form (None: the graph is not quantized; export writes it with fp16
# weights). kv: decoder blocks 0-1 and the head (final layer norm, LM head: half the step's weights) in a16w8,
# blocks 2-5 and the layer norms in float, every calibrated range 4x wide (held-out: 9 of 9 clips keep fp32's
# tokens, mean KL 1.1e-3; without the 4x, 7 of 9). absorbed: the head only; each of its blocks quantized alone
# changed 7 to 9 of the 9 clips (its cross-attention reads the encoder's output F through folded weights).
MIXED = {"kv": {"encoder": None, "decoder_step": "float,block0=16,block1=16,head=16,layer_norm=float,headroom=4"},
         "absorbed": {"encoder": None, "decoder_step": "float,head=16,layer_norm=float,headroom=4"}}
_LN = re.compile(r"^layer_norm_(\d+)/")
# In the encoder too, from its fourth block on, the residual stream's variance reaches the thousands on some
# frames and stays near 1 on others; quantized, the variance was off by a mean square of ~500 and the cross
# K/V with it (ai-edge-quantizer's validate() against the fp32 graph, test_en). So the encoder's layer norms
# stay in float whatever the recipe. (The quantizer names an op by its outputs, each followed by ";".)
LAYER_NORMS = r"^layer_norm_\d+(/[a-z_]+)?;"
# Parts of a recipe named by what they are rather than where: every layer norm's ops.
SCOPES = {"layer_norm": LAYER_NORMS}


def _aeq():
    try:
        # the optional extra (whisperkv-studio[export]), which pins its own LiteRT: only for an integer bundle
        from ai_edge_quantizer import qtyping, quantizer, recipe_manager
    except ImportError:
        raise ModelError("the integer TFLite graphs need ai-edge-quantizer, which is not installed",
                         EXTRA_FIX) from None
    return quantizer, recipe_manager, qtyping


def available() -> bool:
    try:
        _aeq()
    except ModelError:
        return False
    return True


def op_outputs(model: bytes) -> list[tuple[str, str]]:
    """(op name, first output tensor name) of every operator, in graph order."""
    ts = R.tensors(model)
    return [(op.op, ts[op.outputs[0]].name if op.outputs else "") for op in R.operators(model)]


def group_ops(model: bytes, role: str) -> dict[str, list[str]]:
    """{group: [output tensor names]} of a graph's ops (see the module docstring)."""
    if role == "encoder":
        return {"encoder": [name for _, name in op_outputs(model)]}
    groups: dict[str, list[str]] = {}
    lns, group = [], "prefix"
    for _, name in op_outputs(model):
        m = _LN.match(name)
        if m and m.group(1) not in lns:
            lns.append(m.group(1))
            block = (len(lns) - 1) // 3
            group = f"block{block}" if block < 6 else "head"
        groups.setdefault(group, []).append(name)
    # The SOT-prefix ops before the first layer norm (reshapes of the inputs) belong to block 0.
    groups.setdefault("block0", [])[:0] = groups.pop("prefix", [])
    return groups


def _regex(names: list[str]) -> str:
    """Matches the ops writing `names`: the quantizer's scope of an op is its output names, each followed by ";"."""
    return "^(" + "|".join(re.escape(n) for n in names) + ");"


@dataclass
class Recipe:
    """Activation bits for the whole graph (None: left in float), and parts given other bits (None: float).
    A part is a layer group (`group_ops`) or an op kind, named in capitals as TFLite names it (SOFTMAX);
    op kinds are applied after groups, so `SOFTMAX=float` holds in every group."""

    act_bits: int | None
    overrides: dict[str, int | None]
    headroom: float = 1.0      # every calibrated activation range widened this many times (quantize_graph)

    @classmethod
    def named(cls, dtype: str) -> Recipe:
        """a16w8, a8w8 (PRESETS), or a recipe spec (`parse`), such as MIXED's."""
        if dtype == "mixed":
            raise ModelError("mixed names one recipe a graph", "quantize each graph with MIXED[cross][role]")
        return cls.parse(PRESETS.get(dtype, dtype))

    @classmethod
    def parse(cls, spec: str) -> Recipe:
        """`a16w8`, `a8w8` or `float`, then `,PART=BITS` overrides (BITS: 8, 16 or float) and
        `,headroom=K`, e.g. `a16w8,headroom=4`, `a16w8,SOFTMAX=float` or `float,block3=16`."""
        base, *parts = spec.split(",")
        act = {"a16w8": 16, "a8w8": 8, "float": None}
        fix = "write BASE[,PART=8|16|float...][,headroom=K], BASE one of a16w8, a8w8, float"
        if base not in act:
            raise ModelError(f"no recipe base {base!r}", fix)
        overrides: dict[str, int | None] = {}
        headroom = 1.0
        for part in parts:
            name, _, bits = part.partition("=")
            if name == "headroom":
                try:
                    headroom = float(bits)
                except ValueError:
                    headroom = 0.0
                if headroom < 1:
                    raise ModelError(f"recipe part {part!r}: headroom must be a number, 1 or more", fix)
                continue
            if bits not in ("8", "16", "float"):
                raise ModelError(f"recipe part {part!r}: bits must be 8, 16 or float", fix)
            overrides[name] = None if bits == "float" else int(bits)
        return cls(act[base], overrides, headroom)

    def build(self, model: bytes, role: str):
        _, recipe_manager, qtyping = _aeq()
        rm = recipe_manager.RecipeManager()
        every = qtyping.TFLOperationName.ALL_SUPPORTED
        if self.act_bits is not None:
            rm.add_static_config(".*", every, activation_num_bits=self.act_bits, weight_num_bits=8)
        groups = group_ops(model, role)
        kinds = {k: v for k, v in self.overrides.items() if k.isupper()}
        unknown = set(self.overrides) - set(kinds) - set(groups) - set(SCOPES)
        if unknown:
            raise ModelError(f"no layer group {', '.join(sorted(unknown))} in the {role} graph",
                             f"use one of: {', '.join(groups)}, or an op kind in capitals (SOFTMAX)")
        for part, bits in sorted(self.overrides.items(), key=lambda kv: kv[0] in SCOPES):
            if part in kinds:
                continue
            _configure(rm, SCOPES[part] if part in SCOPES else _regex(groups[part]), every, bits)
        for kind, bits in kinds.items():
            try:
                op = qtyping.TFLOperationName(kind)
            except ValueError:
                raise ModelError(f"the quantizer has no op kind {kind!r}", "name a TFLite op, e.g. SOFTMAX") from None
            # Another scope than the base's ".*": the quantizer orders its configs by scope, and the last match wins.
            _configure(rm, "^.*", op, bits)
        if role == "encoder":
            rm.add_quantization_config(LAYER_NORMS, every, algorithm_key="no_quantize")
        return rm.get_quantization_recipe()


def _configure(rm, regex: str, op, bits: int | None) -> None:
    if bits is None:
        rm.add_quantization_config(regex, op, algorithm_key="no_quantize")
    else:
        rm.add_static_config(regex, op, activation_num_bits=bits, weight_num_bits=8)


def quantize_graph(model: bytes, role: str, recipe: Recipe, samples: list[dict], threads: int = 1,
                   bounds: dict[str, float] | None = None) -> bytes:
    """The quantized graph: calibrated on `samples` (input name -> array), then quantized. `bounds` gives
    inputs whose range is known beforehand (±bound), wider than a few utterances show.

    Each range is the true min/max over every sample, not the quantizer's default moving average: the SOT
    token's step (and the attention sink it becomes) carries activations several times those of any other
    step, and an averaged range clipped them, which changed the first token of every clip."""
    quantizer, _, _ = _aeq()
    from ai_edge_quantizer import calibrator  # the optional extra, as in _aeq
    from ai_edge_quantizer.utils import qsv_utils

    q = quantizer.Quantizer(bytearray(model), recipe.build(model, role))
    calib = calibrator.Calibrator(bytearray(model), num_threads=threads, qsv_update_func=qsv_utils.min_max_update)
    calib.calibrate({"serving_default": samples}, q._recipe_manager)
    qsvs = calib.get_model_qsvs()
    # Held-out speech (bench/int_sensitivity.py) drove activations up to ~3x past a few utterances' min/max,
    # the self cache's too; int16 has the bits to spare for a wider range, and clipping changed the tokens.
    for name in qsvs:
        if name not in (bounds or {}) and name != "mask" and recipe.headroom != 1.0:
            qsvs[name] = qsvs[name] | {"min": qsvs[name]["min"] * recipe.headroom,
                                       "max": qsvs[name]["max"] * recipe.headroom}
    for name, bound in (bounds or {}).items():
        if name in qsvs:
            qsvs[name] = qsvs[name] | {"min": np.full_like(qsvs[name]["min"], -bound),
                                       "max": np.full_like(qsvs[name]["max"], bound)}
    # Greedy decoding takes the argmax of the logits: a top logit above the calibrated range saturates, ties
    # with the next and the lower token id wins (on test_en, step 5, at a logits cosine of 0.99999). So the
    # logits (and the FULLY_CONNECTED that the RESHAPE writing them reads) get LOGITS_HEADROOM× their range.
    if "logits" in qsvs:
        for name in ("logits", *_reshaped_from(model, "logits")):
            if name in qsvs:
                qsvs[name] = qsvs[name] | {"min": qsvs[name]["min"] * LOGITS_HEADROOM,
                                           "max": qsvs[name]["max"] * LOGITS_HEADROOM}
    # The self cache fed back is what new_k/new_v wrote: one range for both.
    for fed, written in (("self_k", "new_k"), ("self_v", "new_v")):
        if fed in qsvs and written in qsvs:
            lo = np.minimum(qsvs[fed]["min"].min(), qsvs[written]["min"].min())
            hi = np.maximum(qsvs[fed]["max"].max(), qsvs[written]["max"].max())
            for name in (fed, written):
                qsvs[name] = qsvs[name] | {"min": np.full_like(qsvs[name]["min"], lo),
                                           "max": np.full_like(qsvs[name]["max"], hi)}
    return bytes(q.quantize(qsvs, enable_progress_report=False).quantized_model)


def _reshaped_from(model: bytes, name: str) -> list[str]:
    """The input of the RESHAPE that writes `name`, if one does."""
    ts = R.tensors(model)
    return [ts[op.inputs[0]].name for op in R.operators(model)
            if op.op == "RESHAPE" and op.outputs and ts[op.outputs[0]].name == name]


def float_ops(model: bytes) -> dict[str, int]:
    """{op: count} of the ops a quantized graph still computes in float (not QUANTIZE/DEQUANTIZE)."""
    ts = R.tensors(model)
    out: dict[str, int] = {}
    for op in R.operators(model):
        if op.op in ("QUANTIZE", "DEQUANTIZE") or not op.outputs:
            continue
        if ts[op.outputs[0]].dtype in ("FLOAT32", "FLOAT16"):
            out[op.op] = out.get(op.op, 0) + 1
    return dict(sorted(out.items()))
