"""The numbers rung's thresholds (device/link/doctor/numbers.py): this PC's fp16 TFLite graphs in LiteRT, the
stand-in for an NPU that computes in fp16, pass against the NumPy reference; the same outputs with Gaussian noise of
standard deviation 0.05, or with the cross K and V swapped (a layout bug), fail, at every dtype's floor (an integer
bundle's floor holds against its own graphs: device/link/doctor/numbers.py says why)."""
from __future__ import annotations

import numpy as np
import pytest

from device.link.doctor.numbers import COSINE, compare
from device.link.doctor.reference import reference_probe
from device.runner.probe import pack, probe, sample_positions, unpack


@pytest.fixture(scope="module")
def fp16_probe(tmp_path_factory):
    from core.model.weights import load_model
    from device.link.doctor.reference import first_window
    from device.runner.load import load_model_source
    from device.toolchain.export import export_bundle

    out = tmp_path_factory.mktemp("fp16") / "fp16"
    export_bundle(load_model(), out, "fp16", ("tflite",))
    m = load_model_source(str(out), "tflite")
    return probe(m.backend, m.tokenizer.special.sot, first_window())


def faulty(p: dict, noise: float = 0.0, swap: bool = False) -> dict:
    rng = np.random.default_rng(0)
    outputs = [dict(o) for o in p["outputs"]]
    if swap:
        outputs[0]["values"], outputs[1]["values"] = outputs[1]["values"], outputs[0]["values"]
    for o in outputs:
        v = unpack(o["values"])
        o["values"] = pack(v + rng.normal(0, noise, v.shape)) if noise else o["values"]
    return {**p, "outputs": outputs}


def test_fp16_graphs_in_litert_pass(fp16_probe):
    rows, problems = compare(fp16_probe, reference_probe(), "fp16")
    assert problems == [] and all(r["cosine"] >= COSINE["fp16"] for r in rows)


@pytest.mark.parametrize("dtype", sorted(COSINE))
def test_noise_of_0_05_fails_at_every_dtype(fp16_probe, dtype):
    rows, problems = compare(faulty(fp16_probe, noise=0.05), reference_probe(), dtype)
    assert {r["name"] for r in rows if not r["ok"]} >= {"cross_v"}, rows


@pytest.mark.parametrize("dtype", sorted(COSINE))
def test_swapped_outputs_fail_at_every_dtype(fp16_probe, dtype):
    rows, problems = compare(faulty(fp16_probe, swap=True), reference_probe(), dtype)
    assert {r["name"] for r in rows if not r["ok"]} == {"cross_k", "cross_v"}


def test_the_positions_depend_on_the_shape_only_and_stay_inside_it():
    a, b = sample_positions([6, 1, 1500, 512]), sample_positions((6, 1, 1500, 512))
    assert np.array_equal(a, b) and 4000 <= a.size <= 4096 and a.max() < 6 * 1500 * 512
    assert np.all(np.diff(a) > 0) and not np.array_equal(sample_positions([6, 1, 1500, 511]), a)
    assert np.array_equal(sample_positions([10]), np.arange(10))
