"""The ONNX backends' batched prefill: a window's first T tokens in one call give the logits and K/V of T
steps (to float rounding), and a decode with a prompt and a draft gives the stepped decode's tokens on the
default backend too."""
import numpy as np
import pytest

from core.decode.decoding import decode_windows, encoder_features
from core.decode.options import DecodeOptions
from core.model.kv_cache import KVCache, to_stacked
from core.model.whisper import causal_mask, embed
from device.runner.backends import make_backend
from tests.device.runner.compare_helpers import tokens


@pytest.fixture(scope="module")
def onnx(model):
    return make_backend("onnx", model.weights)


@pytest.fixture(scope="module")
def int8b(model):
    return make_backend("onnx-int8b", model.weights)


@pytest.mark.parametrize("attention", [False, True])
def test_prefill_gives_what_the_reference_steps_give(model, onnx, clip_mels, encoder_cache, attention):
    (cross_k, cross_v), _ = encoder_features(model.backend, clip_mels("test_en.wav")[0], encoder_cache)
    ids = [model.tokenizer.special.sot_prev, *model.tokenizer.encode(" Ask not what your country"),
           *model.tokenizer.sot_sequence("en", "transcribe", False)]
    out = onnx.prefill(embed(onnx, ids, 0), cross_k, cross_v, causal_mask(len(ids))[None, None], attention=attention)
    n, d = len(ids), model.backend.dims
    assert out[0].shape == (1, n, d.n_vocab) and out[1].shape == out[2].shape == (d.n_text_layer, 1, n, d.n_text_state)
    cache = KVCache()
    for i, t in enumerate(ids):
        step = model.backend.step_with_attention(embed(model.backend, [t], i), cache.k, cache.v, cross_k, cross_v,
                                                 cache.mask())
        cache.write(step[1], step[2])
        assert np.abs(out[0][0, i] - step[0].reshape(-1)).max() < 2e-3
        if attention:
            assert out[3].shape == (len(onnx.alignment_heads), n, d.n_audio_ctx)
            assert np.abs(out[3][:, i] - step[3][:, 0]).max() < 1e-3
    assert np.abs(out[1] - cache.k[:, :, :n]).max() < 1e-3 and np.abs(out[2] - cache.v[:, :, :n]).max() < 1e-3
    assert len(out) == (4 if attention else 3)


@pytest.mark.parametrize("clip", ["test_en.wav", "en_asterisk_demo-congrats.wav"])
def test_a_prompt_and_a_draft_keep_the_default_backends_tokens(model, int8b, clip_mels, clip, monkeypatch):
    mels, prompt = clip_mels(clip)[:1], model.tokenizer.encode(" Hello, and welcome to the demonstration.")
    opts = DecodeOptions(language="en", prompt=prompt, word_timestamps=True)
    calls = []
    real = int8b.prefill
    monkeypatch.setattr(int8b, "prefill", lambda *a, **k: calls.append(a[0].shape[1]) or real(*a, **k))
    import core.decode.steppers as steppers

    monkeypatch.setattr(steppers, "PREFILL_MIN", 10 ** 6)                     # one step at a time
    stepped = list(decode_windows(int8b, model.tokenizer, mels, opts))
    assert calls == []
    monkeypatch.setattr(steppers, "PREFILL_MIN", 8)
    batched = list(decode_windows(int8b, model.tokenizer, mels, opts))
    drafted = list(decode_windows(int8b, model.tokenizer, mels, DecodeOptions(**{**opts.__dict__,
                                                                                 "draft": tokens(stepped)[:-1]})))
    assert tokens(batched) == tokens(drafted) == tokens(stepped) and len(tokens(stepped)) > 20
    assert calls == [len(prompt) + 5, len(prompt) + 5 + len(tokens(stepped)) - 1]
    assert [e.cache_len for e in drafted if e.type == "token"] == [e.cache_len for e in stepped if e.type == "token"]


def test_a_streams_warm_up_runs_the_batched_prefill_with_attention(model, onnx, monkeypatch):
    """So a runner builds (or loads) that graph before the stream's clock starts, not in its first passes."""
    from core.stream.one_pass import warm_up

    calls = []
    real = onnx.prefill
    monkeypatch.setattr(onnx, "prefill", lambda *a, **k: calls.append(k.get("attention")) or real(*a, **k))
    warm_up(lambda mel, opts, n: decode_windows(onnx, model.tokenizer, mel, opts, n_frames=n), "en")
    assert calls == [True]


def test_the_fp16_backend_encodes_and_prefills_in_its_own_dtype(model, clip_mels, monkeypatch):
    """onnx-fp16's graphs take and give float16: the per-layer encoder outputs and the prefill's inputs too."""
    import core.decode.steppers as steppers

    fp16 = make_backend("onnx-fp16", model.weights)
    mels, prompt = clip_mels("test_en.wav")[:1], model.tokenizer.encode(" And so, my fellow citizens of the world.")
    cross_k, cross_v = fp16.encode(mels[0])
    assert cross_k.dtype == np.float32 and to_stacked(cross_k).shape == (6, 1, 1500, 512) and np.isfinite(cross_v).all()
    opts = DecodeOptions(language="en", prompt=prompt, word_timestamps=True)
    batched = list(decode_windows(fp16, model.tokenizer, mels, opts))
    monkeypatch.setattr(steppers, "PREFILL_MIN", 10 ** 6)                     # one step at a time
    stepped = list(decode_windows(fp16, model.tokenizer, mels, opts))
    assert tokens(batched) == tokens(stepped) and len(tokens(stepped)) > 20
