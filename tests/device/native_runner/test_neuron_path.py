"""The native runner's Neuron path (device/native_runner/neuron.c, slots.c) through its test driver `neuron-check`,
against the Python `dla` backend (device/runner/neuron/), on the STAND-IN Neuron runtime.

No Neuron runtime and no APU exist here: the library loaded is the STAND-IN of tests/device/runner/standin/, which
computes each graph in LiteRT by calling back into the Python that loaded it. A C program has no Python, so these
tests start `neuron-check` with a small host library preloaded that starts an interpreter (conftest.py's HOST_C); the C
path still opens the stand-in with dlopen and drives it through its own calls. What only a board can show: the
real runtime's sizes, padding and error codes.

Both paths convert fp32 to fp16 rounding to nearest even (NumPy's astype; neuron_check.c's to_f16), so the encoder's
output and the step's logits are compared exactly, not within fp16 rounding.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.errors import ModelError
from device.runner.bundle import read_bundle
from device.runner.neuron.dla_backend import DlaBackend
from device.runner.neuron.neuron_runtime import NeuronError, open_library
from device.spec.neuron_paths import SEARCH_ORDER, SONAMES
from device.toolchain.native_runner_build import build
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library
from tests.device.native_runner import conftest
from tests.device.runner.neuron.test_dla_backend import with_model_json_edited
from tests.device.runner.standin.build import build_empty, build_standin

host_env = conftest.host_env     # the fixture, now in conftest.py: test_request_checks.py imports it from here
HIDDEN = -10000.0       # the dla backend's fp16 mask value (dla_backend.MASK_FP16)


@pytest.fixture(scope="module")
def check() -> Path:
    return build("x86_64", program="neuron-check")


@pytest.fixture(scope="module")
def dla_bundle() -> Path:
    return compiled_dla_bundle()


@pytest.fixture(scope="module")
def inputs(dla_bundle, clip_mels, tmp_path_factory) -> dict:
    """The first window of test_en.wav's mel, and the step's inputs for <|startoftranscript|> at position 0: its
    embedding row, an empty fp16 self cache and a mask hiding every cached position."""
    out = tmp_path_factory.mktemp("inputs")
    b = read_bundle(dla_bundle)
    sot = b.manifest["special_tokens"]["sot"]
    arrays = {
        "mel": np.asarray(clip_mels("test_en.wav")[0], np.float32).reshape(80, 3000),
        "x": (np.asarray(b.token_embedding[sot], np.float32) + np.asarray(b.positional_embedding[0], np.float32))
        .reshape(1, 1, 512),
        "self_k": np.zeros((6, 1, 448, 512), np.float16), "self_v": np.zeros((6, 1, 448, 512), np.float16),
        "mask": np.concatenate([np.full(448, HIDDEN, np.float32), [0.0]]).astype(np.float32).reshape(1, 1, 1, 449),
    }
    for name, a in arrays.items():
        a.tofile(out / name)
    return {"arrays": arrays, "args": [f"{name}={out / name}" for name in arrays]}


def run_check(check, bundle, out: Path, args: list[str], lib: str | None = None, env: dict | None = None,
              api: str | None = None) -> subprocess.CompletedProcess:
    out.mkdir(exist_ok=True)
    cmd = [str(check), *(["--lib", lib] if lib else []), *(["--api", api] if api else []), str(bundle), str(out),
           *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def error_line(r: subprocess.CompletedProcess) -> str:
    """The one line the driver ends with on a refusal (the stand-in's own chatter, LiteRT's, comes before it)."""
    assert r.returncode == 1, r.stdout + r.stderr
    return r.stderr.strip().splitlines()[-1]


def python_path(bundle, lib: str, arrays: dict, api: str | None = None) -> dict:
    """The Python dla backend's encoder outputs and one step's outputs, in the slots' own form."""
    backend = DlaBackend.from_bundle(bundle, lib, neuron_api=api)
    try:
        k, v = backend.encode(arrays["mel"])
        logits, new_k, new_v = backend.step(arrays["x"], arrays["self_k"], arrays["self_v"], k, v, arrays["mask"])
        return {"cross_k": k, "cross_v": v, "logits": logits, "new_k": new_k, "new_v": new_v,
                "detail": backend.describe()}
    finally:
        backend.close()


def calls(bundle, graph: str) -> list[str]:
    path = bundle / f"{graph}.dla.calls"
    lines = path.read_text().split() if path.exists() else []
    path.unlink(missing_ok=True)
    return lines


def forms(stdout: str) -> dict:
    """neuron-check's account of each slot: (graph, name) -> (size, padded, element, row, pitch)."""
    out = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) == 8 and words[1] in ("input", "output"):
            f = dict(w.split("=") for w in words[3:])
            out[(words[0], words[2])] = (int(f["size"]), int(f["padded"]), f["element"], int(f["row"]),
                                         int(f["pitch"]))
    return out


# (the stand-in's build, ?neuron_api= forced or not, the API used, how the slots are fed, their element type)
PATHS = {"v1+v2": ("v1+v2", None, "V1", "native", np.float16),
         "v2 only": ("v2", None, "V2", "converted", np.float32),
         "v2 forced": ("v1+v2", "v2", "V2", "converted", np.float32),
         "padded outputs, no get*Number": ("padded", None, "V1", "native", np.float16)}


@pytest.mark.parametrize("build_name, forced, api, io, element", PATHS.values(), ids=PATHS.keys())
def test_the_c_path_gives_the_python_backends_encoder_output_and_logits(check, dla_bundle, host_env, inputs,
                                                                          tmp_path, build_name, forced, api, io,
                                                                          element):
    """V1 where the library exports it (fp16 slots, the mask's rows padded to 464), V2 for a library without the V1
    symbols or when forced (converted: the .tflite's fp32), as the Python backend chooses; with every row padded
    (the logits' 51865 to 51872) and the slots counted by probing, as older V1 headers need."""
    lib = str(standin_library(build_name))
    want = python_path(dla_bundle, lib, inputs["arrays"], forced)
    calls(dla_bundle, "encoder"), calls(dla_bundle, "decoder_step")
    r = run_check(check, dla_bundle, tmp_path / "out", inputs["args"], lib, host_env, forced)
    assert r.returncode == 0, r.stderr
    assert f"library {lib} version 0.0.1 api {api} io {io}" in r.stdout
    assert (want["detail"]["api"], want["detail"]["io"]) == (api, io)
    # the C path ran each graph on the runtime: one create and one run each
    assert calls(dla_bundle, "encoder") == ["create", "run"] and calls(dla_bundle, "decoder_step") == ["create", "run"]
    suffix = "f16" if element == np.float16 else "f32"
    for graph, name in (("encoder", "cross_k"), ("encoder", "cross_v"), ("decoder_step", "logits"),
                        ("decoder_step", "new_k")):
        got = np.fromfile(tmp_path / "out" / f"{graph}.{name}.{suffix}", element)
        expected = want[name].ravel()
        assert got.size == expected.size and np.array_equal(got.astype(expected.dtype), expected), (graph, name)
    assert np.any(want["logits"] != 0)
    slots = {(g["graph"], s["name"]): (s["size"], s["padded_size"] or 0, {"float16": "f16"}.get(s["element"], "f32"),
                                       s["row"], s["pitch"])
             for g in want["detail"]["graphs"] for s in g["slots"]}
    assert forms(r.stdout) == slots


def test_a_failing_create_and_a_failing_run_are_the_python_backends_lines(check, dla_bundle, host_env, inputs,
                                                                          tmp_path):
    for defines in (("FAIL_CREATE",), ("PADDED", "FAIL_RUN_AT=2")):
        lib = str(build_standin(tmp_path, *defines))
        with pytest.raises(NeuronError) as err:
            python_path(dla_bundle, lib, inputs["arrays"])
        line = error_line(run_check(check, dla_bundle, tmp_path / "out", inputs["args"], lib, host_env))
        assert line == str(err.value)
    assert line.startswith("NeuronRuntime_inference failed for decoder_step.dla with error code 5")


def test_a_library_with_neither_api_is_refused_as_the_python_backend_refuses_it(check, dla_bundle, tmp_path):
    empty = str(build_empty(tmp_path))
    with pytest.raises(NeuronError) as err:
        DlaBackend.from_bundle(dla_bundle, empty)
    line = error_line(run_check(check, dla_bundle, tmp_path / "out", ["mel=/dev/null"], empty))
    assert line == str(err.value) and "it exports neither Runtime API (V1 lacks NeuronRuntime_create" in line


def test_a_missing_library_is_one_line_naming_every_place_tried(check, dla_bundle, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    with pytest.raises(NeuronError) as err:
        open_library(None)
    line = error_line(run_check(check, dla_bundle, tmp_path / "out", ["mel=/dev/null"], env=env))
    assert line == str(err.value)
    assert line.startswith("no Neuron runtime library here (tried ") and all(p in line for p in SEARCH_ORDER + SONAMES)
    assert line.endswith("or name it with ?neuron_lib=PATH (e.g. /usr/lib/libneuronusdk_runtime.mtk.so.8)")
    nowhere = "/nowhere/libneuron_runtime.so"
    with pytest.raises(NeuronError) as err:
        open_library(nowhere)
    line = error_line(run_check(check, dla_bundle, tmp_path / "out", ["mel=/dev/null"], nowhere))
    assert line == str(err.value)


def test_a_bundle_without_the_slot_contract_is_refused_with_the_python_fix_line(check, dla_bundle, tmp_path):
    bad = with_model_json_edited(dla_bundle, tmp_path, lambda doc: doc["dla"].pop("contract"))
    lib = str(standin_library("v1+v2"))
    with pytest.raises(ModelError) as err:
        DlaBackend.from_bundle(bad, lib)
    line = error_line(run_check(check, bad, tmp_path / "out", ["mel=/dev/null"], lib))
    assert line == str(err.value) and "compiled before the slot contract" in line


def test_a_slot_the_runtime_sizes_otherwise_is_refused_naming_the_slot_and_both_sizes(check, dla_bundle, host_env,
                                                                                       tmp_path):
    bad = with_model_json_edited(dla_bundle, tmp_path, lambda doc: doc["dla"]["graphs"]["encoder"]["inputs"][0]["shape"]
                  .__setitem__(-1, 2999))
    lib = str(standin_library("v1+v2"))
    with pytest.raises(ModelError) as err:
        DlaBackend.from_bundle(bad, lib)
    line = error_line(run_check(check, bad, tmp_path / "out", ["mel=/dev/null"], lib, host_env))
    assert line == str(err.value)
    assert line.startswith("encoder.dla input slot 0 (mel FLOAT32 [1, 80, 2999]) is 480000 bytes in the runtime "
                           "(padded 481280): not 239920 elements")
