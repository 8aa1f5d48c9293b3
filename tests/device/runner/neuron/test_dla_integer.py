"""An integer bundle on the `dla` backend: a16w8, whose every input and output slot is int16 with one scale and
zero point, compiled by the STAND-IN ncc-tflite and run by the STAND-IN Neuron runtime (both described in
test_dla_backend.py; the runtime runs the stored graph in LiteRT, integer kernels included). The backend hands
the runtime raw int16 buffers, so it must quantize the decoder's float arrays with the scales compile recorded
and dequantize what comes back: then it gives the tflite backend's tokens on the same bundle."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from core.errors import ModelError
from core.model.kv_cache import KVCache
from device.runner.neuron.dla_backend import DlaBackend
from device.runner.tflite.int_slots import to_slot
from device.runner.tflite.tflite_backend import TfliteBackend
from tests.device.bundle_helpers import compiled_integer_bundle
from tests.device.runner.neuron.test_dla_backend import calls, decode, standin  # noqa: F401  (the stand-in runtime)

# the calibrated integer bundle is built once per test process (tests/device/bundle_helpers.py): under
# pytest-xdist's --dist loadgroup (.ci/run) every module that needs it runs in the same worker
pytestmark = pytest.mark.xdist_group("integer-bundle")


@pytest.fixture(scope="module")
def int_dla():
    pytest.importorskip("ai_edge_quantizer")
    return compiled_integer_bundle()


def test_compile_records_each_integer_slots_scale_and_zero_point(int_dla):
    dla = json.loads((int_dla / "model.json").read_text())["dla"]
    step = dla["graphs"]["decoder_step"]
    slots = step["inputs"] + step["outputs"]
    assert {s["name"] for s in step["inputs"]} >= {"x", "self_k", "self_v", "cross_k", "cross_v", "mask"}
    assert all(s["dtype"] == "INT16" and s["scale"] > 0 and isinstance(s["zero_point"], int) for s in slots)
    assert dla["graphs"]["encoder"]["inputs"][0]["dtype"] == "INT16"


def test_the_dla_gives_the_tflite_backends_tokens_on_the_integer_bundle(int_dla, standin, clip_mels,  # noqa: F811
                                                                         monkeypatch):
    from device.runner.neuron import neuron_slots

    calls(int_dla, "encoder"), calls(int_dla, "decoder_step")
    mels = clip_mels("test_en.wav")
    backend = DlaBackend.from_bundle(int_dla, str(standin))
    quantized = []
    monkeypatch.setattr(neuron_slots, "to_slot", lambda value, *a: quantized.append(value.size) or to_slot(value, *a))
    got = decode(backend, int_dla, mels, language="en")
    # the window's cross K and V (6 x 1500 x 512 each) are quantized once, not once a step
    assert len(mels) == 1 and quantized.count(6 * 1500 * 512) == 2
    want = decode(TfliteBackend.from_bundle(int_dla), int_dla, mels, language="en")
    assert len(got.tokens) > 5 and got.tokens == want.tokens
    assert calls(int_dla, "encoder") == ["create", "run"] and "run" in calls(int_dla, "decoder_step")
    assert backend.describe()["weights"] == "a16w8" and backend.describe()["cross"] == "kv"


def test_the_converted_path_keeps_the_integer_slots_and_their_scales(int_dla, standin):  # noqa: F811
    """Both paths feed an integer slot its own type through its recorded scale: the same step comes back. The step
    is held to it, not the encoder: its slots are int16 as the encoder's are, and it runs in a fraction of the int16
    encoder's time in LiteRT."""
    native = DlaBackend.from_bundle(int_dla, str(standin))
    converted = DlaBackend.from_bundle(int_dla, str(standin), neuron_io="converted")
    for backend in (native, converted):
        slots = [s for g in backend.describe()["graphs"] for s in g["slots"]]
        assert {(s["element"], s["tflite"]) for s in slots} == {("int16", "INT16")}
        assert {"mel", "x", "cross_k", "logits"} <= {s["name"] for s in slots}
    assert converted.lib.io == "converted" and converted.cache_layout == native.cache_layout == {}
    rng = np.random.default_rng(0)
    cache = KVCache()
    cache.write(*rng.normal(0, 0.5, (2, 6, 1, 1, 512)).astype(np.float32))
    x, cross_k, cross_v = (rng.normal(0, 0.5, shape).astype(np.float32)
                           for shape in ((1, 1, 512), (6, 1, 1500, 512), (6, 1, 1500, 512)))
    got = [b.step(x, cache.k, cache.v, cross_k, cross_v, cache.mask()) for b in (native, converted)]
    for a, b in zip(*got):
        assert a.dtype == b.dtype == "float32" and (a == b).all()
    assert np.abs(got[0][0]).max() > 0


def test_an_integer_slot_without_its_scale_is_refused_naming_it(int_dla, standin, tmp_path):  # noqa: F811
    old = tmp_path / "old"
    shutil.copytree(int_dla, old)
    doc = json.loads((old / "model.json").read_text())
    del doc["dla"]["graphs"]["decoder_step"]["inputs"][0]["scale"]
    (old / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelError, match=r"no scale for the integer input \w+ of decoder_step.dla") as err:
        DlaBackend.from_bundle(old, str(standin))
    assert "whisperkv compile" in err.value.fix
