"""step_with_attention on the onnx and tflite backends: built on first use, equal to the NumPy reference."""
import numpy as np
import pytest

from core.model.backend import AttentionBackend
from core.model.kv_cache import KVCache
from core.model.whisper import embed
from device.runner.backends import make_backend

TOL = 1e-3


@pytest.mark.parametrize("name", ["onnx", "tflite"])
def test_attention_equals_numpy_and_plain_step_is_untouched(name, model, en_mel):
    backend = make_backend(name, model.weights)
    assert isinstance(backend, AttentionBackend) and backend.alignment_heads == model.backend.alignment_heads
    assert getattr(backend, "_step_attention", None) is None          # nothing built until asked
    cross = model.backend.encode(en_mel[:1])
    d = model.backend.dims
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    for pos, token in enumerate(model.tokenizer.sot_sequence("en")):
        args = (embed(model.backend, [token], pos), cache.k, cache.v, *cross, cache.mask())
        ref = model.backend.step_with_attention(*args)
        ours = backend.step_with_attention(*args)
        plain = backend.step(*args)
        assert ours[3].shape == (8, 1, 1500) and np.allclose(ours[3].sum(-1), 1.0, atol=1e-4)
        assert np.abs(ours[3] - ref[3]).max() <= TOL
        for a, b in zip(plain, ours[:3]):
            assert np.abs(a - b).max() <= TOL
        cache.write(ref[1], ref[2])
