"""The onnx backend against the NumPy reference: same tokens, logits within 1e-3 at every step."""
import numpy as np
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.model.backend import Backend
from core.model.encoder_cache import EncoderCache, cross_key
from core.model.kv_cache import to_stacked
from device.runner.backends import (
    BackendError,
    available_backends,
    choose_auto,
    make_backend,
)
from tests.device.bundle_helpers import exported_bundle
from tests.device.runner.compare_helpers import Compare, tokens

CLIPS = ["test_en.wav", "test_zh.wav"]
TOL = 1e-3


@pytest.fixture(scope="module")
def onnx_backend(model):
    return make_backend("onnx", model.weights)


@pytest.mark.parametrize("clip", CLIPS)
def test_tokens_equal_numpy_and_logits_within_tolerance(clip, model, onnx_backend, clip_mels, encoder_cache):
    mels = clip_mels(clip)
    both = Compare(model.backend, onnx_backend)
    ref = list(decode_windows(both, model.tokenizer, mels, DecodeOptions(), encoder_cache=encoder_cache))
    assert len(both.step_diffs) > 5
    assert max(both.step_diffs) <= TOL, both.step_diffs
    assert max(both.kv_diffs) <= TOL

    own = EncoderCache(1 << 28)     # keeps the onnx encoder's cross K/V for the comparison below
    ours = list(decode_windows(onnx_backend, model.tokenizer, mels, DecodeOptions(), encoder_cache=own))
    assert tokens(ours) == tokens(ref)
    assert ours[-1].text == ref[-1].text and ours[-1].reason == "eot"

    cross = own.get(cross_key(onnx_backend, mels[0]))
    cross_ref = encoder_cache.get(cross_key(model.backend, mels[0]))
    assert max(float(np.abs(to_stacked(a) - b).max()) for a, b in zip(cross, cross_ref)) <= TOL


def test_uncached_graph_gives_the_cached_tokens(model, onnx_backend, clip_mels):
    mels = clip_mels("test_zh.wav")
    cache = EncoderCache(1 << 28)
    cached = list(decode_windows(onnx_backend, model.tokenizer, mels, DecodeOptions(cache=True), encoder_cache=cache))
    uncached = list(decode_windows(onnx_backend, model.tokenizer, mels, DecodeOptions(cache=False),
                                   encoder_cache=cache))
    assert tokens(uncached) == tokens(cached) and len(tokens(cached)) > 5
    # The uncached graph keeps its activations' memory between calls (the runner's heap would fault them in
    # afresh every token); the step graph does not need to.
    arenas = [s.get_session_options().enable_cpu_mem_arena for s in (onnx_backend._full, onnx_backend._step)]
    assert arenas == [True, onnx_backend.config.arena]


def test_bundle_backend_equals_the_in_memory_graphs(onnx_backend, clip_mels):
    from_bundle = make_backend("onnx", exported_bundle())
    assert from_bundle.name == "onnx" and from_bundle.sha256 == onnx_backend.sha256
    d = onnx_backend.dims
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 1, d.n_text_state)).astype(np.float32)
    kv = rng.standard_normal((d.n_text_layer, 1, d.n_text_ctx, d.n_text_state)).astype(np.float32)
    cross = rng.standard_normal((d.n_text_layer, 1, d.n_audio_ctx, d.n_text_state)).astype(np.float32)
    mask = np.zeros((1, 1, 1, d.n_text_ctx + 1), np.float32)
    for a, b in zip(from_bundle.step(x, kv, kv, cross, cross, mask), onnx_backend.step(x, kv, kv, cross, cross, mask)):
        assert np.array_equal(a, b)


def test_both_backends_satisfy_the_written_interface(model, onnx_backend):
    assert isinstance(model.backend, Backend) and model.backend.name == "numpy"
    assert isinstance(onnx_backend, Backend) and onnx_backend.name == "onnx"
    assert not isinstance(Compare(model.backend, onnx_backend), Backend)     # no full(): not a backend


def test_backend_selection():
    from device.runner.native.library import supported

    assert choose_auto() == ("native-int8b" if supported() else "onnx")   # the C step where it builds
    assert {"numpy", "onnx", "onnx-int8", "onnx-int8b", "onnx-fp16"} <= set(available_backends())
    with pytest.raises(BackendError, match="unknown backend 'tpu'.*use auto or one of"):
        make_backend("tpu", None)


@pytest.mark.parametrize("layout", ["the backend's own (bound once)", "stacked (copied each step)"])
def test_bound_steps_see_the_cache_as_it_is_now(onnx_backend, clip_mels, layout):
    """step() keeps its K/V inputs bound while the same arrays come back: the cache written in place, grown into
    new arrays at 64 slots, or stacked and copied to the graphs' layout, the logits are those of a plain run."""
    from core.model.kv_cache import KVCache
    from core.model.whisper import embed

    be, d = onnx_backend, onnx_backend.dims
    cross_k, cross_v = be.encode(clip_mels("test_en.wav")[0])
    own = layout.startswith("the backend")
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state, **(be.cache_layout if own else {}))
    x = np.empty((1, 1, d.n_text_state), np.float32)    # one buffer, as CachedStepper feeds it: bound while it stays
    for token in [50258, 50259, 50359, 50363, *range(400, 470 if own else 404)]:
        x[...], mask = embed(be, [token], cache.cache_len), cache.mask()
        plain = be._step.run(["logits", "new_k", "new_v"], be._decoder_feeds(x, mask, cross_k, cross_v, cache.k, cache.v))
        logits, new_k, new_v = be.step(x, cache.k, cache.v, cross_k, cross_v, mask)
        np.testing.assert_array_equal(logits, plain[0])
        np.testing.assert_array_equal(new_k, plain[1])
        cache.write(new_k, new_v)
    assert cache.slots == (128 if own else 448)
