"""An absorbed bundle (`export --cross absorbed`) on every backend: it records its form, passes check-dla,
and decodes every bundled clip to the kv form's tokens with logits within 1e-3 of the kv reference."""
import numpy as np
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.errors import ModelError
from core.model.encoder_cache import cross_key
from core.model.kv_cache import KVCache
from core.model.whisper import embed
from device.runner.backends import make_backend
from device.runner.bundle import read_bundle
from device.toolchain.check_dla import check
from tests.conftest import AUDIO
from tests.device.bundle_helpers import exported_bundle
from tests.device.runner.compare_helpers import tokens

CLIPS = sorted(p.name for p in AUDIO.glob("*.wav"))
TOL = 1e-3
F_BYTES = 1500 * 512 * 4


@pytest.fixture(scope="module")
def bundle():
    return exported_bundle("absorbed")


@pytest.fixture(scope="module")
def onnx_absorbed(bundle):
    return make_backend("onnx", bundle)


class AgainstKV:
    """Decodes along `other` (absorbed) and measures each step's logits against `ref` (kv, NumPy) on the
    same tokens and cache: the kv cross state comes from the shared encoder cache when it has the window."""

    def __init__(self, ref, other, encoder_cache):
        self.ref, self.other, self.encoder_cache = ref, other, encoder_cache
        self.dims, self.name, self.cross = other.dims, "against-kv", other.cross
        self.token_embedding, self.positional_embedding = other.token_embedding, other.positional_embedding
        self.diffs: list[float] = []

    def encode(self, mel):
        key = cross_key(self.ref, mel.reshape(mel.shape[-2:]))
        self.ref_cross = self.encoder_cache.get(key) or self.ref.encode(mel)
        self.encoder_cache.put(key, self.ref_cross)
        return self.other.encode(mel)

    def step(self, x, self_k, self_v, feats, none, mask):
        got = self.other.step(x, self_k, self_v, feats, none, mask)
        want = self.ref.step(x, self_k, self_v, *self.ref_cross, mask)
        self.diffs.append(float(np.abs(got[0] - want[0]).max()))
        return got


def test_the_bundle_records_its_form_and_passes_check_dla(bundle):
    b = read_bundle(bundle, verify=True)
    assert b.cross == "absorbed"
    assert b.manifest["graphs"]["encoder"]["outputs"] == {"F": [1, 1, 1500, 512]}
    assert "F" in b.manifest["graphs"]["decoder_step_tflite"]["inputs"]
    assert "cross_k" not in b.manifest["graphs"]["decoder_step"]["inputs"]
    reports = check(bundle)
    assert {r.graph for r in reports} == {"encoder", "decoder_step", "encoder_tflite", "decoder_step_tflite"}
    assert all(r.ok for r in reports), [v for r in reports for v in r.violations]


@pytest.mark.parametrize("clip", CLIPS)
def test_tokens_equal_the_kv_forms_on_every_clip(clip, model, onnx_absorbed, clip_mels, encoder_cache):
    mels = clip_mels(clip)
    ref = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(), encoder_cache=encoder_cache))
    both = AgainstKV(model.backend, onnx_absorbed, encoder_cache)
    ours = list(decode_windows(both, model.tokenizer, mels, DecodeOptions()))
    assert tokens(ours) == tokens(ref) and len(tokens(ref)) > 3
    assert [e.text for e in ours if e.type == "done"] == [e.text for e in ref if e.type == "done"]
    assert len(both.diffs) > 3 and max(both.diffs) <= TOL, max(both.diffs)
    encoded = [e for e in ours if e.type == "encoded"]
    assert all(e.cross_form == "absorbed" and e.cross_bytes == F_BYTES for e in encoded)
    assert [e.cross_bytes for e in ref if e.type == "encoded"][0] == 12 * F_BYTES      # kv: 6 layers x K, V


@pytest.mark.parametrize("clip", ["test_en.wav", "test_zh.wav"])
def test_tflite_serves_the_absorbed_bundle(clip, model, bundle, clip_mels, encoder_cache):
    backend = make_backend("tflite", bundle)
    assert backend.cross == "absorbed"
    mels = clip_mels(clip)
    ref = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(), encoder_cache=encoder_cache))
    ours = list(decode_windows(backend, model.tokenizer, mels, DecodeOptions()))
    assert tokens(ours) == tokens(ref)
    assert ours[0].cross_form == "absorbed" and ours[0].cross_bytes == F_BYTES


def _first_step(model, backend, en_mel):
    """The SOT step on an empty cache, in the backend's own form, and the kv reference's for it."""
    d = backend.dims
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    x = embed(backend, [model.tokenizer.special.sot], 0)
    kv = model.backend.encode(en_mel[:1])
    return (x, cache.k, cache.v, *backend.encode(en_mel[:1]), cache.mask()), (x, cache.k, cache.v, *kv, cache.mask())


@pytest.mark.parametrize("name", ["numpy", "onnx-fp16", "onnx-int8"])
def test_other_backends_on_the_absorbed_bundle(name, model, bundle, en_mel):
    backend = make_backend(name, bundle)
    assert backend.cross == "absorbed"
    args, kv_args = _first_step(model, backend, en_mel)
    assert args[4] is None and args[3].shape == (1, 1, 1500, 512)
    got, want = backend.step(*args)[0], model.backend.step(*kv_args)[0]
    assert int(got.argmax()) == int(want.argmax())
    if name == "numpy":      # the params read back out of the bundle: the same numbers
        assert np.abs(got - want).max() <= TOL


def test_attention_and_the_uncached_mode_on_the_absorbed_bundle(model, onnx_absorbed, en_mel):
    args, kv_args = _first_step(model, onnx_absorbed, en_mel)
    got, want = onnx_absorbed.step_with_attention(*args), model.backend.step_with_attention(*kv_args)
    assert got[3].shape == want[3].shape == (len(onnx_absorbed.alignment_heads), 1, 1500)
    assert np.abs(got[3] - want[3]).max() <= TOL and np.abs(got[0] - want[0]).max() <= TOL
    cached = list(decode_windows(onnx_absorbed, model.tokenizer, en_mel, DecodeOptions()))
    uncached = list(decode_windows(onnx_absorbed, model.tokenizer, en_mel, DecodeOptions(cache=False)))
    assert tokens(uncached) == tokens(cached) and len(tokens(cached)) > 5


def test_asking_a_bundle_for_the_other_form_names_the_fix(bundle):
    with pytest.raises(ModelError, match="has absorbed cross-attention graphs, not kv.*--cross kv"):
        make_backend("onnx", bundle, cross="kv")
    assert make_backend("numpy", bundle, cross="absorbed").cross == "absorbed"
