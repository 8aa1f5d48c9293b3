"""One encoder cache shared by backends that keep the cross state in other layouts (ONNX Runtime's head-major K/V,
the NumPy reference's stacked ones) hands each backend its own layout, never the other's."""
from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.model.encoder_cache import EncoderCache


def test_a_cache_shared_by_two_layouts_gives_each_backend_its_own(model, onnx_model, clip_mels):
    mels = clip_mels("en_asterisk_hello-world.wav")
    assert onnx_model.backend.head_major and not getattr(model.backend, "head_major", False)
    shared = EncoderCache(1 << 30)
    runs = [list(decode_windows(m.backend, m.tokenizer, mels, DecodeOptions(), encoder_cache=shared))[-1]
            for m in (onnx_model, model)]
    alone = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions()))[-1]
    assert runs[1].tokens == alone.tokens == runs[0].tokens and len(shared) == 2
