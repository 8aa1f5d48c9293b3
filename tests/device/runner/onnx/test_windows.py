"""The onnx backends' shorter windows: encoders built on first use from the same params, the 30 s one's numbers on
the window's frames (within fp32 rounding of the NumPy reference), kept in the start-up cache; steps that attend to
the window's positions alone; a backend whose encoder cannot be rebuilt from fp32 params serves 30 s only."""
import numpy as np
import pytest

from core.model.backend import encode_sized, windows_of
from core.model.dims import FULL_WINDOW_S, WINDOWS_S
from core.model.kv_cache import KVCache, to_stacked
from core.model.weights import load_model
from core.model.whisper import NumpyBackend
from device.runner.backends import make_backend
from device.runner.native.backend import NativeBackend
from device.runner.onnx.host_graphs import window_graph
from device.runner.onnx.onnx_build import windows
from tests.core.model.test_weights import _tiny_hf_checkpoint


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny")
    _tiny_hf_checkpoint(path)
    return load_model(path)


@pytest.fixture
def mel():
    return np.random.default_rng(4).standard_normal((1, 80, 3000)).astype(np.float32)


@pytest.mark.parametrize("name", ["onnx", "onnx-int8b"])
def test_each_window_is_the_reference_on_its_frames(name, tiny, mel):
    backend, ref = make_backend(name, tiny), NumpyBackend(tiny)
    assert windows_of(backend) == WINDOWS_S
    tol = 1e-4 if name == "onnx" else 0.1        # int8b: block-quantised weights and activations
    for window_s in WINDOWS_S:
        k, v = backend.encode_window(mel, window_s)
        rk, rv = ref.encode_window(mel, window_s)
        assert to_stacked(k).shape == rk.shape == (1, 1, tiny.dims.audio_positions(window_s), 16)
        assert np.abs(to_stacked(k) - rk).max() < tol and np.abs(to_stacked(v) - rv).max() < tol


def test_the_steps_read_a_shorter_windows_cross_state(tiny, mel):
    backend, ref = make_backend("onnx", tiny), NumpyBackend(tiny)
    d = tiny.dims
    cross = encode_sized(ref, mel, 10)
    x = np.random.default_rng(6).standard_normal((1, 1, d.n_text_state)).astype(np.float32)
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    mask = np.full((1, 1, 1, d.n_text_ctx + 1), -1e9, np.float32)
    mask[..., -1] = 0
    want = ref.step_with_attention(x, cache.k, cache.v, *cross, mask)
    got = backend.step_with_attention(x, cache.k, cache.v, *cross, mask)
    assert got[3].shape == want[3].shape == (len(backend.alignment_heads), 1, 500)
    assert all(np.abs(a - b).max() < 1e-4 for a, b in zip(got, want))
    assert np.abs(backend.step(x, cache.k, cache.v, *cross, mask)[0] - want[0]).max() < 1e-4
    causal = np.zeros((1, 1, 1, 1), np.float32)
    assert np.abs(backend.full(x, *cross, causal) - ref.full(x, *cross, causal)).max() < 1e-4
    logits, new_k, _ = backend.prefill(x, *cross, causal)          # a stream pass's prompt, in one call
    assert np.abs(logits[:, -1:] - want[0]).max() < 1e-4 and np.abs(new_k - want[1]).max() < 1e-4


def test_a_window_encoder_is_kept_in_the_start_up_cache(tiny, mel, tmp_path):
    backend = make_backend("onnx", tiny)
    backend.cache_dir = tmp_path
    first = backend.encode_window(mel, 20)[0]
    assert (tmp_path / window_graph(20)).is_file() and not (tmp_path / window_graph(10)).exists()
    again = make_backend("onnx", tiny)
    again.cache_dir = tmp_path

    def no_params():
        raise AssertionError("rebuilt: the start-up cache's graph was not read")
    again._full_params = no_params
    assert np.array_equal(again.encode_window(mel, 20)[0], first)
    with pytest.raises(AssertionError, match="rebuilt"):
        again.encode_window(mel, 10)


def test_native_int8b_encodes_its_windows_with_onnx_int8b(mel):
    class Onnx:
        windows = WINDOWS_S

        def encode_window(self, mel, window_s):
            return ("onnx-int8b", window_s)

    backend = NativeBackend(Onnx(), native=None)
    assert windows_of(backend) == WINDOWS_S and backend.encode_window(mel, 20) == ("onnx-int8b", 20)


def test_a_step_of_fixed_cross_shape_serves_30_s(tiny):
    """The absorbed form's step reads F [1, 1, 1500, d], which any_window leaves as it is."""
    assert make_backend("onnx", tiny, cross="absorbed").windows == (FULL_WINDOW_S,)


def test_backends_that_cannot_rebuild_their_encoder_serve_30_s():
    assert windows("fp32", from_weights=True) == windows("int8b", from_weights=True) == WINDOWS_S
    assert windows("fp16", from_weights=True) == windows("int8", from_weights=True) == (FULL_WINDOW_S,)
    assert windows("fp32", from_weights=False) == (FULL_WINDOW_S,)       # a bundle's
