"""native-int8b: onnx-int8b's weights with the decoder step in C (device/runner/native/), the real compiled
library on this CPU. Its tokens on every bundled clip are held to the reference's in test_auto_backend.py."""
import os

import numpy as np
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.errors import ModelError
from device.runner.backends import BackendError, make_backend, resolve
from device.runner.native import library
from device.runner.native.library import build_library, supported
from device.runner.native.step import quantize_blocks
from device.spec.runtime_config import for_process
from tests.device.runner.compare_helpers import Compare, three_ways, tokens

pytestmark = pytest.mark.skipif(not supported(), reason="this CPU has no AVX-512, or no C compiler is installed")


@pytest.fixture(scope="module")
def native(model):
    return make_backend("native-int8b", model.weights)


def test_its_weights_are_onnx_int8bs_bit_for_bit(model):
    import onnx
    from onnx import helper, numpy_helper

    from device.graphs.quantize import quantize_model

    w = model.weights.params["decoder.blocks.0.mlp.0.weight"]           # [out, in]
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, w.shape[1]])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, w.shape[0]])],
                              [numpy_helper.from_array(np.ascontiguousarray(w.T), "w")])
    quantised = quantize_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "int8b")
    inits = {t.name: numpy_helper.to_array(t) for t in quantised.graph.initializer}
    blob = next(a for a in inits.values() if a.dtype == np.uint8)           # [out, in/16, 16], zero point 128
    scales = next(a for a in inits.values() if a.dtype == np.float32)
    q, s = quantize_blocks(w)
    assert np.array_equal(q.astype(np.int16), blob.reshape(q.shape).astype(np.int16) - 128)
    assert np.array_equal(s.ravel(), scales.ravel())


def test_logits_follow_the_reference_closely(model, native, clip_mels, encoder_cache):
    both = Compare(model.backend, native)
    list(decode_windows(both, model.tokenizer, clip_mels("test_en.wav"), DecodeOptions(), encoder_cache=encoder_cache))
    # largest logit error per step: int8 weights with fp32 activations and int8 cross K/V, median 0.19 and max 0.28
    # here, where onnx-int8b (activations quantised too) gives 0.28 and 0.70; a wrong block, head or transposition
    # gives garbage, fp32 weights 1e-4
    diffs = both.step_diffs
    assert len(diffs) > 5 and 0.005 < np.median(diffs) < 0.35 and max(diffs) < 0.5, diffs
    assert max(both.kv_diffs) < 0.1, both.kv_diffs


def test_cached_uncached_and_attention_decodes_give_the_same_tokens(model, native, clip_mels):
    cached, uncached, attention = three_ways(native, model.tokenizer, clip_mels("test_zh.wav"))
    assert uncached == cached == attention and len(cached) > 5


def test_attention_weights_are_the_reference_heads(model, native, clip_mels):
    d = model.weights.dims
    ref = model.backend
    ck, cv = ref.encode(clip_mels("test_en.wav")[0][None])
    self_k = np.zeros((d.n_text_layer, 1, 64, d.n_text_state), np.float32)
    mask = np.full((1, 1, 1, 65), -1e9, np.float32)
    mask[..., -1] = 0
    x = (ref.token_embedding[50258] + ref.positional_embedding[0])[None, None].astype(np.float32)
    want = ref.step_with_attention(x, self_k, self_k, ck, cv, mask)
    got = native.step_with_attention(x, self_k, self_k, ck, cv, mask)
    assert got[3].shape == want[3].shape == (len(native.alignment_heads), 1, d.n_audio_ctx)
    assert np.allclose(got[3].sum(-1), 1, atol=1e-4)
    assert np.abs(got[3] - want[3]).max() < 0.02
    assert np.abs(got[0] - want[0]).max() < 1.0


def test_a_window_is_packed_once_and_the_next_window_anew(native, clip_mels):
    d = native.dims
    first = native.encode(clip_mels("test_en.wav")[0][None])
    cache = np.zeros((d.n_text_layer, d.n_text_head, 64, 64), np.float32)
    mask = np.full((1, 1, 1, 65), -1e9, np.float32)
    mask[..., -1] = 0
    x = np.full((1, 1, d.n_text_state), 0.1, np.float32)
    a = native.step(x, cache, cache, *first, mask)[0].copy()
    packed = native._native._packed[2]
    assert native.step(x, cache, cache, *first, mask)[0].tolist() == a.tolist()
    assert native._native._packed[2] is packed
    second = native.encode(clip_mels("test_zh.wav")[0][None])
    b = native.step(x, cache, cache, *second, mask)[0]
    assert native._native._packed[2] is not packed and np.abs(a - b).max() > 0.1


def test_the_start_up_cache_keeps_the_library_and_maps_the_weights(tmp_path, monkeypatch, clip_mels):
    from device.runner.startup_cache import load_cached

    monkeypatch.setenv("WHISPERKV_CACHE", str(tmp_path))
    first, *_ = load_cached(None, "native-int8b")
    lib = library.library_path(tmp_path)
    built = lib.stat().st_mtime_ns
    again, *_ = load_cached(None, "native-int8b")
    assert again.name == "native-int8b" and lib.stat().st_mtime_ns == built
    head = again._native.arrays["head_q"]
    assert isinstance(head.base, np.memmap) or isinstance(getattr(head.base, "base", None), np.memmap)
    assert again.onnx._step is None                      # no ONNX Runtime step session beside the C one
    mels = clip_mels("test_en.wav")
    assert tokens(decode_windows(first, _tokenizer(), mels, DecodeOptions())) == \
        tokens(decode_windows(again, _tokenizer(), mels, DecodeOptions()))


def _tokenizer():
    from core.model.tokenizer import WhisperTokenizer
    from core.model.weights import find_tokenizer

    return WhisperTokenizer.from_file(find_tokenizer(), 51865)


def test_a_failed_compile_names_the_fix_and_auto_picks_the_next_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", "false")
    with pytest.raises(ModelError) as err:
        build_library(tmp_path)
    assert "compiling the native step failed" in str(err.value) and "gcc" in err.value.fix
    assert not list(tmp_path.rglob("*.so"))
    monkeypatch.setenv("WHISPERKV_CACHE", str(tmp_path))
    assert resolve("auto") == "onnx"
    monkeypatch.delenv("CC")
    assert resolve("auto") == "native-int8b" and list(tmp_path.rglob("*.so"))


def test_a_machine_without_avx512_is_told_what_to_use(monkeypatch):
    monkeypatch.setattr(library, "_cpu_flags", lambda: {"sse2", "avx2"})
    assert resolve("auto") == "onnx"
    with pytest.raises(BackendError) as err:
        resolve("native-int8b")
    assert "AVX-512" in str(err.value) and "--backend onnx" in err.value.fix


def test_only_a_one_shot_run_lets_openmp_spin_between_tokens(monkeypatch):
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    for_process("one-shot")
    assert "GOMP_SPINCOUNT" not in os.environ
    for_process("serve")
    assert os.environ["GOMP_SPINCOUNT"] == "1000"


def test_the_absorbed_form_and_a_stacked_cache_are_handled(model, native):
    with pytest.raises(ModelError):
        make_backend("native-int8b", model.weights, cross="absorbed")
    d = native.dims
    rng = np.random.default_rng(0)
    ck = rng.standard_normal((d.n_text_layer, 1, d.n_audio_ctx, d.n_text_state)).astype(np.float32)
    stacked = rng.standard_normal((d.n_text_layer, 1, 64, d.n_text_state)).astype(np.float32) * 0.1
    mask = np.zeros((1, 1, 1, 65), np.float32)
    x = rng.standard_normal((1, 1, d.n_text_state)).astype(np.float32) * 0.1
    want = model.backend.step(x, stacked, stacked, ck, ck, mask)[0]
    got = native.step(x, stacked, stacked, ck, ck, mask)[0]
    assert np.abs(got - want).max() < 1.0 and got.argmax() == want.argmax()


def test_a_shorter_windows_step_follows_the_reference(model, native, clip_mels):
    """The C step takes a 20 s window's 1000 positions (core/model/dims.py WINDOWS_S) and attends to them alone."""
    from core.model.kv_cache import KVCache
    from core.model.whisper import embed

    d = model.backend.dims
    cross = model.backend.encode_window(clip_mels("test_en.wav")[0], 20)
    x = embed(model.backend, [model.tokenizer.special.sot], 0)
    cache = KVCache()
    mask = np.full((1, 1, 1, d.n_text_ctx + 1), -1e9, np.float32)
    mask[..., -1] = 0
    want = model.backend.step_with_attention(x, cache.k, cache.v, *cross, mask)
    got = native.step_with_attention(x, cache.k, cache.v, *cross, mask)
    assert got[3].shape == want[3].shape == (len(native.alignment_heads), 1, 1000)
    assert np.abs(got[0] - want[0]).max() < 0.5      # int8 weights and cross K/V, as on 30 s windows above
    assert np.abs(got[3] - want[3]).max() < 0.02     # where each head looks, position by position
