"""The native runner's hello beside the Python runner's, on one compiled bundle and the STAND-IN Neuron runtime
(tests/device/runner/standin/; no APU exists here): the same account of the backend, the model, the cache, the
board's SoC (read under WHISPERKV_SOC_ROOT from files posing as a Genio 520's) and the machine, each runner naming
itself, the native one listing only the features it serves."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from device import protocol as P
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library
from tests.device.native_runner.conftest import Runner, runner_argv

SOC_ROOT_FILES = {"proc/device-tree/compatible": b"mediatek,mt8189\0mediatek,mt8371-evk\0"}
# what the Python runner's dla backend reports that the native one does not serve: the step's attention variant
ATTENTION_ONLY = ["attention", "word_timestamps"]


@pytest.fixture(scope="module")
def soc_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("soc")
    for name, data in SOC_ROOT_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def hellos(host_env, bundle, lib, soc_root) -> dict:
    out = {}
    for kind in ("python", "native"):
        env = {**(host_env if kind == "native" else os.environ), "WHISPERKV_SOC_ROOT": str(soc_root)}
        runner = Runner(runner_argv(kind, bundle, lib), env)
        try:
            runner.request({"op": "hello", "protocol": P.PROTOCOL})
            out[kind] = runner.event(300)
        finally:
            runner.close()
    return out


def without(ev: dict, *keys: str) -> dict:
    return {k: v for k, v in ev.items() if k not in keys}


def test_the_native_hello_is_the_python_runners_but_for_its_name_and_features(host_env, soc_root):
    lib = str(standin_library("v1+v2"))
    h = hellos(host_env, compiled_dla_bundle(), lib, soc_root)
    py, native = h["python"], h["native"]
    assert (py["runner"], native["runner"]) == ("python", "native")
    assert native["soc"] == py["soc"] and native["soc"]["name"] == "MT8371"
    assert native["features"] == [f for f in py["features"] if f not in ATTENTION_ONLY]
    assert native["load_ms"] > 0
    # the Python runner's dla backend opens the step's attention variant too; the native one drives two graphs
    py_detail = {**py["backend_detail"], "graphs": py["backend_detail"]["graphs"][:2]}
    assert native["backend_detail"] == py_detail and native["backend_detail"]["library"] == lib
    same = ("runner", "features", "load_ms", "sent_t", "backend_detail")
    assert without(native, *same) == without(py, *same)
    assert native["npu"] == "stand-in" and native["runner_kind"] == "pc"


def test_a_compiler_of_another_major_version_is_the_python_runners_warning(host_env, soc_root, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(compiled_dla_bundle(), bundle)
    manifest = json.loads((bundle / "model.json").read_text())
    manifest["dla"]["version"] = "ncc-tflite version 8.0.10"
    (bundle / "model.json").write_text(json.dumps(manifest))
    h = hellos(host_env, bundle, str(standin_library("v1+v2")), soc_root)
    warning = h["native"]["backend_detail"]["version_warning"]
    assert warning == h["python"]["backend_detail"]["version_warning"]
    assert warning.startswith("the .dla graphs were compiled by ncc-tflite 8.x")
