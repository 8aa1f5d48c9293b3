"""The board's graphs for a shorter encoder window, on the real weights in LiteRT: each window's encoder is the
NumPy reference's `encode_window` (the same weights, the positional table's first rows); the step with its
`cross_mask` input, fed the window's cross state in its first positions and zeros after, gives the reference
step's logits on the window alone, in both cross forms; a zero mask over the same padded state does not, so the
mask is what hides the rest. No op a board graph lacks, and each passes the MDLA 5.3 check."""
import numpy as np
import pytest

from core.model.kv_cache import KVCache
from core.model.whisper import NumpyBackend, embed
from device.graphs.tflite_graphs import build_decoder_step_tflite, build_encoder_tflite
from device.graphs.tflite_read import io, operators
from device.runner.tflite.cross_window import CrossWindow
from device.toolchain.check_dla import check_graph
from tests.conftest import AUDIO
from tests.device.graphs.tflite_helpers import BOARD_OPS, run_tflite

WINDOW_S = 10


@pytest.fixture(scope="module")
def mel():
    from core.model.audio import load_audio
    from core.model.mel import mel_windows

    return mel_windows(load_audio(AUDIO / "test_en.wav"))[:1]


@pytest.mark.parametrize("cross", ["kv", "absorbed"])
def test_a_shorter_windows_encoder_and_the_masked_step_are_the_reference_on_the_window(cross, weights, reference,
                                                                                     mel, tmp_path):
    p, d = weights.params, weights.dims
    ref = reference if cross == "kv" else NumpyBackend(weights, cross="absorbed")
    names = ("cross_k", "cross_v") if cross == "kv" else ("F",)
    encoder = build_encoder_tflite(p, d, cross=cross, window_s=WINDOW_S)
    assert io(encoder)["inputs"] == {"mel": [1, 80, 1000]}
    got = run_tflite(encoder, {"mel": mel[:, :, :1000]})
    want = [s for s in ref.encode_window(mel, WINDOW_S) if s is not None]
    for name, w in zip(names, want):
        assert got[name].shape == w.shape and w.shape[2] == 500
        assert np.abs(got[name] - w).max() < 1e-2 * max(1.0, np.abs(w).max())

    step = build_decoder_step_tflite(p, d, cross=cross, cross_mask=True)
    assert io(step)["inputs"]["cross_mask"] == [1, 1, 1, 1500]
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    x = embed(ref, [50258], 0)
    mask = cache.mask()
    state = (*want, None)[:2]
    *padded, cross_mask = CrossWindow(d.n_audio_ctx, -1e9).feed(*state)
    assert padded[0].shape[2] == 1500 and (cross_mask[..., :500] == 0).all() and (cross_mask[..., 500:] < 0).all()
    feeds = {"x": x, "self_k": cache.k, "self_v": cache.v, "mask": mask, **dict(zip(names, padded))}
    want_logits = ref.step(x, cache.k, cache.v, *state, mask)[0]
    masked = run_tflite(step, feeds | {"cross_mask": cross_mask})["logits"]
    assert np.abs(masked - want_logits).max() < 1e-3
    unmasked = run_tflite(step, feeds | {"cross_mask": np.zeros_like(cross_mask)})["logits"]
    assert np.abs(unmasked - want_logits).max() > 0.1       # the zeros past the window would be attended to

    assert {o.op for o in operators(step)} <= BOARD_OPS and {o.op for o in operators(encoder)} <= BOARD_OPS
    for name, graph in (("encoder_10s", encoder), ("decoder_step", step)):
        (tmp_path / f"{name}.tflite").write_bytes(graph)
        assert check_graph(tmp_path / f"{name}.tflite").ok
