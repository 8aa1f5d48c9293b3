"""Shorter encoder windows on both runners (issue 55): a bundle exported with `--windows 10,20,30` and compiled by
the STAND-IN ncc-tflite, served by the Python runner's `dla` backend and by the native runner in C through the
STAND-IN Neuron runtime (test_conformance.py says what they are). Both list the windows in hello, encode a request's
`window_s` with that window's own `.dla` and give the same events (tokens, text, log-probabilities, the encoded
event's window and cross bytes); both refuse a window they do not serve, or audio past the window, with the same
line, and serve on."""
from __future__ import annotations

import pytest

from tests.device.native_runner.conftest import KINDS, Pair, differences
from tests.device.runner.neuron.test_dla_backend import with_model_json_edited

WINDOW_CASES = {"en at 20 s": ("test_en.wav", "en", 20), "zh at 10 s": ("test_zh.wav", "zh", 10)}


@pytest.fixture(scope="module")
def pair(start_runner, lib, tmp_path_factory) -> Pair:
    """Both runners on the windowed bundle, the step's attention variant taken out of its model.json (the native
    runner has none: conftest.py `bundle`)."""
    from tests.device.bundle_helpers import compiled_windowed_bundle

    bundle = with_model_json_edited(compiled_windowed_bundle(), tmp_path_factory.mktemp("windows"),
                                    lambda doc: doc["dla"]["graphs"].pop("decoder_step_attention", None))
    return Pair(start_runner, bundle, lib)


def frames(clip: str) -> int:
    from core.model.audio import load_audio
    from tests.conftest import AUDIO

    return -(-len(load_audio(AUDIO / clip)) // 160)       # 100 mel frames a second


def ask(pair, mel, clip: str, rid: str, **fields) -> dict:
    desc, payload = mel(clip)
    return pair.ask({"op": "transcribe", "id": rid, "mel": desc, **fields}, payload)


def test_both_list_the_windows_in_hello(pair):
    assert [pair.hello[kind]["windows"] for kind in KINDS] == [[10, 20, 30]] * 2


@pytest.mark.parametrize("case", WINDOW_CASES)
def test_a_window_gives_the_same_events_on_both_runners(pair, mel, case):
    clip, language, window_s = WINDOW_CASES[case]
    got = ask(pair, mel, clip, f"w{window_s}", language=language, window_s=window_s, n_frames=frames(clip))
    python, native = ([ev for ev in got[kind] if ev["type"] != "sample"] for kind in KINDS)
    assert python[-1]["type"] == "done" and python[-1]["reason"] == "eot", python[-1]
    assert differences(python, native) == []
    encoded = native[0]
    assert encoded["type"] == "encoded" and encoded["window_s"] == window_s
    assert encoded["cross_bytes"] == 2 * 6 * 50 * window_s * 512 * 2         # K and V, fp16, the window's positions
    assert len([ev for ev in native if ev["type"] == "token"]) > 10


def test_the_30_s_window_of_a_windowed_bundle_is_the_same_on_both(pair, mel):
    got = ask(pair, mel, "test_zh.wav", "w30", language="zh")
    python, native = ([ev for ev in got[kind] if ev["type"] != "sample"] for kind in KINDS)
    assert "window_s" not in native[0] and native[0]["cross_bytes"] == 2 * 6 * 1500 * 512 * 2
    assert differences(python, native) == [] and python[-1]["reason"] == "eot"


@pytest.mark.parametrize("fields", [{"window_s": 15}, {"window_s": "20"}, {"window_s": 20.0}, {"window_s": True},
                                    {"window_s": 10, "n_frames": 1500}, {"window_s": 20}])
def test_a_window_not_served_or_audio_past_it_is_refused_alike(pair, mel, fields):
    got = ask(pair, mel, "test_en.wav", "bad", language="en", **fields)
    errors = {kind: events[-1] for kind, events in got.items()}
    assert [e["type"] for e in errors.values()] == ["error", "error"], errors
    assert errors["python"]["code"] == errors["native"]["code"] == "bad_request"
    assert errors["python"]["message"] == errors["native"]["message"], errors
    assert "window_s" in errors["native"]["message"] or "n_frames" in errors["native"]["message"]
    pair.serves_on()
