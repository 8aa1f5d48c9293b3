"""One encoder cache shared by backends that keep the cross state in other layouts (ONNX Runtime's head-major K/V,
the NumPy reference's stacked ones) hands each backend its own layout, never the other's: not even when a backend
misstates its layout."""
from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.model.encoder_cache import EncoderCache, cross_key


def test_a_cache_shared_by_two_layouts_gives_each_backend_its_own(model, onnx_model, clip_mels):
    mels = clip_mels("en_asterisk_hello-world.wav")
    assert onnx_model.backend.head_major and not getattr(model.backend, "head_major", False)
    shared = EncoderCache(1 << 30)
    runs = [list(decode_windows(m.backend, m.tokenizer, mels, DecodeOptions(), encoder_cache=shared))[-1]
            for m in (onnx_model, model)]
    alone = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions()))[-1]
    assert runs[1].tokens == alone.tokens == runs[0].tokens and len(shared) == 2


class Unlabelled:
    """ONNX Runtime's backend seen through a wrapper that forgot its `head_major`: it returns head-major K/V while
    its key says stacked, the NumPy reference's layout."""

    def __init__(self, backend):
        self.backend = backend
        for name in ("dims", "name", "token_embedding", "positional_embedding", "alignment_heads", "cache_layout"):
            setattr(self, name, getattr(backend, name))

    def encode(self, mel):
        return self.backend.encode(mel)

    def step(self, *args):
        return self.backend.step(*args)


def test_a_backend_that_misstates_its_layout_never_hands_it_to_another(model, onnx_model, clip_mels):
    mels = clip_mels("en_asterisk_hello-world.wav")
    wrapped = Unlabelled(onnx_model.backend)
    assert cross_key(wrapped, mels[0]) == cross_key(model.backend, mels[0])          # one key, two layouts
    shared = EncoderCache(1 << 30)
    first = list(decode_windows(wrapped, model.tokenizer, mels, DecodeOptions(), encoder_cache=shared))[-1]
    ref = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(), encoder_cache=shared))[-1]
    assert shared.hits == 0 and len(shared) == 2        # the reference missed, and encoded its own
    assert ref.tokens == first.tokens and ref.reason == "eot"
    k, v = shared.get(cross_key(model.backend, mels[0]))
    assert k.shape[1] == v.shape[1] == 1                 # stacked, as the reference reads them
