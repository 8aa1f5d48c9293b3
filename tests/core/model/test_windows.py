"""Encoder windows shorter than 30 s (core/model/dims.py WINDOWS_S): the NumPy reference encodes the mel's first
frames with the positional table's first rows, and its step attends to the window's positions alone: what an
additive mask over the rest of 1500 positions computes."""
import numpy as np
import pytest

from core.errors import ModelError
from core.model.backend import encode_sized, windows_of
from core.model.dims import FULL_WINDOW_S, WINDOWS_S, ModelDims
from core.model.kv_cache import KVCache
from core.model.weights import load_model
from core.model.whisper import NumpyBackend
from tests.core.model.test_weights import _tiny_hf_checkpoint


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A one-layer random model with d = 16: the reference's windows in milliseconds."""
    path = tmp_path_factory.mktemp("tiny")
    _tiny_hf_checkpoint(path)
    return NumpyBackend(load_model(path))


@pytest.fixture
def mel():
    return np.random.default_rng(3).standard_normal((1, 80, 3000)).astype(np.float32)


def test_lengths_come_from_one_table():
    dims = ModelDims()
    assert WINDOWS_S == tuple(sorted(WINDOWS_S)) and FULL_WINDOW_S == 30 == WINDOWS_S[-1]
    assert [dims.audio_positions(s) for s in WINDOWS_S] == [500, 1000, 1500]
    assert [dims.window_frames(s) for s in WINDOWS_S] == [1000, 2000, 3000]
    assert dims.for_window(10).n_audio_ctx == 500 and dims.for_window(10).n_text_ctx == dims.n_text_ctx
    with pytest.raises(ValueError, match="no 15 s window: the windows are 10, 20, 30 s"):
        dims.audio_positions(15)


def test_a_short_window_reads_only_its_frames_and_the_first_positions(tiny, mel):
    assert windows_of(tiny) == WINDOWS_S
    k, v = tiny.encode_window(mel, 10)
    assert k.shape == v.shape == (1, 1, 500, 16)
    later = mel.copy()
    later[..., 1000:] = 5.0        # audio past the window changes nothing in it
    assert np.array_equal(tiny.encode_window(later, 10)[0], k)
    # The same as the encoder of a model whose positional table and mel are cut to the window.
    feats = tiny.encode_features(mel[..., :1000])
    assert np.array_equal(tiny.decoder_blocks[0].cross.attn.key(feats), k[0, 0])
    table = tiny.audio_positional_embedding
    tiny.audio_positional_embedding = np.zeros_like(table)
    try:
        assert not np.array_equal(tiny.encode_window(mel, 10)[0], k)   # the rows are added
    finally:
        tiny.audio_positional_embedding = table


def test_the_30_s_window_is_the_encoder_and_the_step_attends_to_a_window_alone(tiny, mel):
    assert all(np.array_equal(a, b) for a, b in zip(encode_sized(tiny, mel), tiny.encode(mel)))
    k, v = encode_sized(tiny, mel, 20)
    assert k.shape == (1, 1, 1000, 16)
    d = tiny.dims
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    x = np.random.default_rng(5).standard_normal((1, 1, 16)).astype(np.float32)
    mask = np.full((1, 1, 1, d.n_text_ctx + 1), -1e9, np.float32)
    mask[..., -1] = 0
    logits = tiny.step(x, cache.k, cache.v, k, v, mask)[0]
    assert logits.shape == (1, 1, d.n_vocab) and np.isfinite(logits).all()
    # Zero-padded to 1500 positions without a mask, the padding takes attention: other numbers.
    pad = ((0, 0), (0, 0), (0, 500), (0, 0))
    padded = tiny.step(x, cache.k, cache.v, np.pad(k, pad), np.pad(v, pad), mask)[0]
    assert np.abs(padded - logits).max() > 1e-4


def test_a_backend_without_windows_serves_30_s_only(tiny, mel):
    class Plain:
        name, dims = "plain", tiny.dims

        def encode(self, mel):
            return tiny.encode(mel)

    assert windows_of(Plain()) == (30,)
    assert encode_sized(Plain(), mel, 30)[0].shape[2] == 1500
    with pytest.raises(ModelError, match="the plain backend has no 10 s window"):
        encode_sized(Plain(), mel, 10)
