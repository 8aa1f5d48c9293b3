"""The fp16 reference (core/model/fp16_reference.py): the NumPy model as `--relax-fp32` computes on the MDLA."""
from __future__ import annotations

import numpy as np

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.model.fp16_reference import Fp16Reference, fp16_ops, to_fp16
from core.model.layers import Linear, rounded


def test_every_op_output_is_rounded_inside_fp16_ops_and_only_there():
    x = np.float32([[1.0001, 2.0, 70000.0]])
    layer = Linear(np.eye(3, dtype=np.float32))
    assert layer(x)[0, 0] == np.float32(1.0001)                       # fp32 outside
    with fp16_ops():
        out = layer(x)
        assert out[0, 0] == np.float32(np.float16(1.0001)) and out[0, 2] == 65504.0   # rounded, saturated
    assert rounded(x) is x and to_fp16(np.float32([-1e9]))[0] == -65504.0


def test_the_fp16_reference_moves_the_numbers_a_little_and_keeps_the_tokens(model, clip_mels):
    fp16 = Fp16Reference(model.weights)
    mels = clip_mels("en_asterisk_hello-world.wav")
    k32, v32 = model.backend.encode(mels[:1])
    k16, v16 = fp16.encode(mels[:1])
    assert np.array_equal(k16, to_fp16(k16)) and not np.array_equal(k16, k32)    # values fp16 holds
    cos = float(np.dot(v16.ravel(), v32.ravel()) / np.linalg.norm(v16) / np.linalg.norm(v32))
    assert 0.9999 < cos < 1.0
    opts = DecodeOptions(language="en")
    want = [e.token for e in decode_windows(model.backend, model.tokenizer, mels, opts) if e.type == "token"]
    got = [e.token for e in decode_windows(fp16, model.tokenizer, mels, opts) if e.type == "token"]
    assert got == want
