"""A bundle with shorter encoder windows (`whisperkv export --windows 10,20,30`) on the `dla` backend, through the
STAND-IN Neuron runtime and the STAND-IN ncc-tflite (tests/device/runner/neuron/test_dla_backend.py says what they
are): one `.dla` per window, each passing the MDLA 5.3 check; at each length the tokens are the NumPy reference's
at that length, only that window's encoder runs, and hello lists the lengths. The tflite backend serves the same
bundle with the same tokens, its 30 s window too (the step's cross mask then hides nothing)."""
from __future__ import annotations

import json

import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from device.runner.neuron.dla_backend import DlaBackend
from device.runner.serve.served_model import windows_hello
from device.runner.tflite.tflite_backend import TfliteBackend
from device.toolchain.check_dla import check
from tests.device.bundle_helpers import WINDOWS, compiled_windowed_bundle, standin_library


@pytest.fixture(scope="module")
def windowed():
    return compiled_windowed_bundle()


def tokens(backend, model, mels, **opts) -> list[int]:
    return [ev.token for ev in decode_windows(backend, model.tokenizer, mels, DecodeOptions(**opts))
            if ev.type == "token"]


def runs(bundle, graph: str) -> int:
    path = bundle / f"{graph}.dla.calls"
    count = path.read_text().split().count("run") if path.exists() else 0
    path.unlink(missing_ok=True)
    return count


def test_compile_writes_and_check_dla_passes_a_dla_per_window(windowed):
    doc = json.loads((windowed / "model.json").read_text())
    assert doc["windows"] == list(WINDOWS)
    graphs = doc["dla"]["graphs"]
    assert {"encoder", "encoder_10s", "encoder_20s", "decoder_step", "decoder_step_attention"} == set(graphs)
    assert graphs["encoder_10s"]["inputs"] == [{"name": "mel", "shape": [1, 80, 1000], "dtype": "FLOAT32"}]
    assert graphs["encoder_20s"]["outputs"][0]["shape"] == [6, 1, 1000, 512]
    for step in ("decoder_step", "decoder_step_attention"):
        assert graphs[step]["inputs"][-1] == {"name": "cross_mask", "shape": [1, 1, 1, 1500], "dtype": "FLOAT32"}
    reports = check(windowed)
    assert {r.graph for r in reports} >= {"encoder_10s_tflite", "encoder_20s_tflite"} and all(r.ok for r in reports)


@pytest.mark.parametrize(("clip", "language", "window_s"), [("test_en.wav", "en", 20), ("test_zh.wav", "zh", 10)])
def test_each_window_gives_the_references_tokens_at_that_length(windowed, model, clip_mels, clip, language,
                                                                window_s):
    backend = DlaBackend.from_bundle(windowed, str(standin_library("v1+v2")))
    assert backend.windows == WINDOWS and windows_hello(backend) == {"windows": list(WINDOWS)}
    for graph in ("encoder", "encoder_10s", "encoder_20s"):
        runs(windowed, graph)
    mels = clip_mels(clip)
    got = tokens(backend, model, mels, language=language, window_s=window_s)
    assert got == tokens(model.backend, model, mels, language=language, window_s=window_s)
    assert len(got) > 10 and got[-1] == model.tokenizer.special.eot
    assert runs(windowed, f"encoder_{window_s}s") == 1 and runs(windowed, "encoder") == 0
    other = 30 - window_s
    assert runs(windowed, f"encoder_{other}s") == 0


def test_the_tflite_backend_serves_the_same_windows(windowed, model, clip_mels):
    backend = TfliteBackend.from_bundle(windowed)
    assert backend.windows == WINDOWS
    mels = clip_mels("test_en.wav")
    for window_s in (20, 30):
        assert tokens(backend, model, mels, language="en", window_s=window_s) == tokens(
            model.backend, model, mels, language="en", window_s=window_s)
