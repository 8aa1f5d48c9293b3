"""The numbers rung's thresholds (device/doctor/numbers.py): this PC's fp16 TFLite graphs in LiteRT, the
stand-in for an NPU that computes in fp16, pass against the NumPy reference; the same outputs with Gaussian noise of
standard deviation 0.05, or with the cross K and V swapped (a layout bug), fail, at every dtype's floor (an integer
bundle's floor holds against its own graphs: device/doctor/numbers.py says why).

The integer form, a16w8, through the runner: the ladder climbed to the numbers rung on the local runner with the
dla backend, the a16w8 bundle compiled by the STAND-IN ncc-tflite and run by the STAND-IN Neuron runtime (its int16
slots quantized by the backend, the graphs run in LiteRT): it passes against the bundle's own graphs. The faults
at the a16w8 floor hold the integer graphs' own outputs, with noise added or cross K and V swapped, against them
(the STAND-IN adds its noise to float outputs only, and an a16w8 .dla's are int16)."""
from __future__ import annotations

from argparse import Namespace

import numpy as np
import pytest

from cli.doctor_cmd import checkup_for
from core.model.weights import load_model
from device.doctor.ladder import NAMES, RUNGS, climb, release
from device.doctor.numbers import BOUNDS, compare, threshold
from device.doctor.reference import first_window, reference_probe
from device.runner.load import load_model_source
from device.runner.serve.probe import pack, probe, sample_positions, unpack
from device.toolchain.export import export_bundle
from tests.cli.doctor_helpers import standin_library
from tests.device.bundle_helpers import compiled_integer_bundle

# the calibrated integer bundle is built once per test process (tests/device/bundle_helpers.py): under
# pytest-xdist's --dist loadgroup (.ci/run) every module that needs it runs in the same worker
pytestmark = pytest.mark.xdist_group("integer-bundle")


@pytest.fixture(scope="module")
def fp16_probe(tmp_path_factory):
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
    assert problems == [] and all(r["cosine"] >= BOUNDS["fp16"].cosine for r in rows)


# int8 weights on the host sit further from fp32 than this noise (docs/doctor.md, "The bounds"): its floor catches
# a swap, and its tokens rung the rest
@pytest.mark.parametrize("arithmetic", sorted(set(BOUNDS) - {"int8-host"}))
def test_noise_of_0_05_fails_at_every_arithmetics_floor(fp16_probe, arithmetic):
    rows, problems = compare(faulty(fp16_probe, noise=0.05), reference_probe(), "fp32", BOUNDS[arithmetic].cosine)
    assert {r["name"] for r in rows if not r["ok"]} >= {"cross_v"}, rows


@pytest.mark.parametrize("arithmetic", sorted(BOUNDS))
def test_swapped_outputs_fail_at_every_arithmetics_floor(fp16_probe, arithmetic):
    rows, problems = compare(faulty(fp16_probe, swap=True), reference_probe(), "fp32", BOUNDS[arithmetic].cosine)
    assert {r["name"] for r in rows if not r["ok"]} == {"cross_k", "cross_v"}


def test_the_floor_follows_the_backends_arithmetic():
    assert threshold("fp32", "dla") == threshold("fp16", "onnx-fp16") == BOUNDS["fp16"].cosine
    assert threshold("fp32", "native-int8b") == BOUNDS["int8-host"].cosine
    assert threshold("fp32", "onnx") == BOUNDS["fp32"].cosine and threshold("a16w8", "dla") == BOUNDS["integer"].cosine


@pytest.fixture(scope="module")
def a16w8():
    """Shared with tests/device/runner/neuron/test_dla_integer.py and tests/device/toolchain/test_int_export.py: one
    calibrated bundle per test process."""
    pytest.importorskip("ai_edge_quantizer")
    return compiled_integer_bundle().resolve()


def up_to_numbers(bundle) -> dict:
    """The ladder from reach to numbers on the STAND-IN runtime, as `whisperkv doctor --model BUNDLE` climbs it."""
    device = f"local?backend=dla&neuron_lib={standin_library()}"
    checkup = checkup_for(Namespace(device=device, model=str(bundle), quick=True, trust_host_key=None))
    try:
        return {r.name: r for r in climb(checkup, rungs=RUNGS[:NAMES.index("numbers") + 1])}
    finally:
        release(checkup)


def test_the_integer_bundles_own_graphs_pass_through_the_runner(a16w8):
    by = up_to_numbers(a16w8)
    assert [by[n].status in ("pass", "warn") for n in NAMES[:NAMES.index("numbers")]] == [True] * 5
    assert by["loads"].figures["npu"] == "stand-in"
    numbers = by["numbers"]
    f = numbers.figures
    assert numbers.status == "pass", numbers.decided_by
    assert f["dtype"] == "a16w8" and f["against"] == "the bundle's TFLite graphs in LiteRT"
    assert f["cosine_floor"] == BOUNDS["integer"].cosine and {r["name"] for r in f["outputs"]} == {"cross_k", "cross_v",
                                                                                          "logits"}
    # the same board outputs against fp32 fall below the floor: only the bundle's own graphs let them pass
    assert min(r["cosine"] for r in f["against_fp32"]) < BOUNDS["integer"].cosine


def test_noise_of_0_05_or_a_swap_fails_on_the_integer_bundle(a16w8):
    """The runner's path of both faults is tests/cli/test_doctor_cmd.py's (fp32); here, the a16w8 floor."""
    own = reference_probe("kv", str(a16w8))          # the integer graphs in LiteRT, as the rung's PC side
    assert compare(own, own, "a16w8")[1] == []
    for bad, failing in ((faulty(own, noise=0.05), {"cross_v"}), (faulty(own, swap=True), {"cross_k", "cross_v"})):
        rows, problems = compare(bad, own, "a16w8")
        assert problems and {r["name"] for r in rows if not r["ok"]} >= failing, rows


def test_the_positions_depend_on_the_shape_only_and_stay_inside_it():
    a, b = sample_positions([6, 1, 1500, 512]), sample_positions((6, 1, 1500, 512))
    assert np.array_equal(a, b) and 4000 <= a.size <= 4096 and a.max() < 6 * 1500 * 512
    assert np.all(np.diff(a) > 0) and not np.array_equal(sample_positions([6, 1, 1500, 511]), a)
    assert np.array_equal(sample_positions([10]), np.arange(10))
