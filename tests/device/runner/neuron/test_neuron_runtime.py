"""MediaTek's Neuron runtime as the images name and expose it, on STAND-IN runtime libraries.

The stand-ins (tests/device/runner/standin/, built as `libneuronusdk_runtime.mtk.so.8`, the Yocto image's name,
without the marker MediaTek's library lacks) export Runtime V1 only, V2 only, or both; with conversion suppressed
their float slots are fp16 and the inputs' rows padded (one build pads the outputs too and lacks V1's get*Number,
as older headers do). Each computes in LiteRT the graph its `.dla` holds, so each build must give the NumPy
reference's tokens. What only a board can show: the real library's symbols, sizes, codes and QoS effect.
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from device import protocol as P
from device.runner.bundle import read_bundle
from device.runner.neuron.dla_backend import DlaBackend
from device.runner.neuron.neuron_runtime import NeuronError, NeuronLibrary, open_library
from device.spec.neuron_fixes import V2_CONVERTS
from device.spec.neuron_paths import SEARCH_ORDER, SONAMES, first_present, major, runtime_probe, tried, version_warning
from tests.conftest import AUDIO, ROOT
from tests.device.bundle_helpers import STANDIN_BUILDS, compiled_dla_bundle, standin_library
from tests.device.runner.neuron.test_dla_backend import decode
from tests.device.runner.standin.build import build_empty, build_standin

API_OF = {"v1": "V1", "v2": "V2", "v1+v2": "V1", "padded": "V1"}   # V1 wherever the library exports it


@pytest.fixture(scope="module")
def bundle():
    return compiled_dla_bundle()


_REFERENCES: dict[str, Transcript] = {}


def reference(model, clip_mels, clip: str, language: str) -> Transcript:
    """The NumPy reference's transcript of a clip, decoded once per module."""
    if clip not in _REFERENCES:
        t = Transcript()
        for ev in model.transcribe(clip_mels(clip), DecodeOptions(language=language)):
            t.add(ev)
        _REFERENCES[clip] = t
    return _REFERENCES[clip]


def transcribe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", "transcribe", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)


def test_the_search_order_is_yocto_then_android_and_a_miss_names_every_path(tmp_path):
    assert SEARCH_ORDER[:3] == ("/usr/lib/libneuronusdk_runtime.mtk.so.8", "/usr/lib/libneuronusdk_runtime.mtk.so",
                                "/usr/lib/libneuron_runtime.so")
    assert SEARCH_ORDER[3] == "/vendor/lib64/mt8189/libneuron_runtime.8.so"
    later = tmp_path / "libneuron_runtime.so"
    later.write_bytes(b"")
    assert first_present((str(tmp_path / "missing.so"), str(later))) == str(later)
    if first_present() is None:      # this PC has none of them
        with pytest.raises(NeuronError, match="no Neuron runtime library here") as err:
            open_library()
        assert all(p in str(err.value) for p in SEARCH_ORDER)


def test_v1_is_used_where_exported_v2_otherwise_and_neuron_api_forces_one():
    for build, api in API_OF.items():
        assert NeuronLibrary(str(standin_library(build))).api == api
    assert NeuronLibrary(str(standin_library("v1+v2")), "v2").api == "V2"
    with pytest.raises(NeuronError, match=r"does not export Neuron Runtime V2 \(it has V1\).*neuron_api=v1"):
        NeuronLibrary(str(standin_library("v1")), "V2")
    probe = runtime_probe((str(standin_library("v1+v2")),))
    assert probe == {"path": str(standin_library("v1+v2")), "version": "0.0.1", "apis": ["V1", "V2"], "api": "V1"}


def test_versions_are_compared_by_major_and_unknown_compares_nothing():
    assert (major("8.2.16"), major("ncc-tflite stand-in, version 0.0-test"), major("unknown")) == (8, 0, None)
    assert version_warning("ncc-tflite 8.0.10", "8.2.16") == "" and version_warning("unknown", "8.2.16") == ""
    assert "loads only on a runtime of its compiler's major version" in version_warning("ncc-tflite 7.1.0", "8.2.16")


def test_hello_warns_when_the_compilers_major_version_is_not_the_runtimes(bundle, caplog, tmp_path):
    b = read_bundle(bundle)
    b.manifest["dla"]["version"] = "NeuroPilot ncc-tflite version 8.0.10"     # the stand-in runtime says 0.0.1
    detail = DlaBackend(b, str(standin_library("v1"))).describe()
    assert "compiled by ncc-tflite 8.x" in detail["version_warning"] and "recompile" in detail["version_warning"]
    assert detail["version_warning"] in caplog.text
    # a create that then fails says why it may have
    with pytest.raises(NeuronError, match=r"NeuronRuntime_create failed .* compiled by ncc-tflite 8.x .* — recompile "
                                          r"with an ncc-tflite 0.x$"):
        DlaBackend(b, str(build_standin(tmp_path, "FAIL_CREATE")))


# The V1+V2 build through V2 here, as --neuron-api asks (test_dla_backend.py's CLI test runs it through V1).
FORCED = {"v1+v2": "v2"}


@pytest.mark.parametrize("build", list(STANDIN_BUILDS))
def test_transcribe_gives_the_reference_tokens_through_each_build_and_names_the_library_and_api(
        build, bundle, model, clip_mels):
    lib = standin_library(build)
    forced = ["--neuron-api", FORCED[build]] if build in FORCED else []
    r = transcribe(str(AUDIO / "test_en.wav"), "--device", f"local?backend=dla&neuron_lib={lib}", "--model",
                   str(bundle), "--language", "en", "--json", *forced)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["tokens"] == reference(model, clip_mels, "test_en.wav", "en").tokens
    ran = doc["ran_on"]
    api = FORCED.get(build, API_OF[build]).upper()
    io = "converted" if api == "V2" else "native"      # V2 has no public way to suppress conversion
    assert (ran["where"], ran["library"], ran["library_version"], ran["api"], ran["io"]) == (
        "npu", str(lib), "0.0.1", api, io)


@pytest.mark.parametrize("build", ["v1", "v1+v2"])
def test_test_zh_gives_the_reference_tokens_on_the_native_path(build, bundle, model, clip_mels):
    """test_en goes through every build above; test_zh through the API the runner prefers, in this process."""
    backend = DlaBackend.from_bundle(bundle, str(standin_library(build)))
    assert backend.lib.io == "native" and np.dtype(backend.cache_layout["dtype"]) == np.float16
    got = decode(backend, bundle, clip_mels("test_zh.wav"), language="zh")
    assert got.tokens == reference(model, clip_mels, "test_zh.wav", "zh").tokens


def test_the_converted_path_gives_the_same_tokens_from_the_same_bundle(bundle, model, clip_mels):
    backend = DlaBackend.from_bundle(bundle, str(standin_library("v1")), neuron_io="converted")
    mel = backend.describe()["graphs"][0]["slots"][0]
    assert (backend.lib.io, mel["element"], mel["size"], mel["pitch"]) == ("converted", "float32", 80 * 3000 * 4, 3000)
    assert backend.cache_layout == {}
    got = decode(backend, bundle, clip_mels("test_en.wav"), language="en")
    assert got.tokens == reference(model, clip_mels, "test_en.wav", "en").tokens


def test_a_v2_only_library_runs_the_converted_path_and_says_why(bundle, caplog):
    detail = DlaBackend.from_bundle(bundle, str(standin_library("v2"))).describe()
    assert (detail["api"], detail["io"], detail["io_note"]) == ("V2", "converted", V2_CONVERTS)
    assert V2_CONVERTS in caplog.text


def test_the_form_is_derived_from_the_runtimes_sizes_padding_after_each_row(bundle):
    """The `padded` build pads every row, outputs too: the pitch comes from get*PaddedSize, never a constant."""
    backend = DlaBackend.from_bundle(bundle, str(standin_library("padded")))
    graph = backend._graphs["encoder"].graph
    assert graph.padded_sizes("Input") == [80 * 3008 * 2] and graph.input_sizes == [80 * 3000 * 2]
    step = {s["name"]: s for s in backend.describe()["graphs"][1]["slots"]}
    assert (step["logits"]["pitch"], step["logits"]["padded_size"]) == (51872, 51872 * 2)
    assert (step["self_k"]["pitch"], step["mask"]["pitch"], step["x"]["element_bytes"]) == (512, 464, 2)


@pytest.mark.parametrize("fault", ["fp32 data", "an unpadded buffer"])
def test_a_buffer_not_in_the_slots_form_is_refused_in_one_line_naming_the_slot(fault, bundle):
    backend = DlaBackend.from_bundle(bundle, str(standin_library("v1")))
    step = backend._graphs["decoder_step"]
    ins = [f.buffer() for f in step.forms["input"]]
    outs = [f.buffer() for f in step.forms["output"]]
    mask = next(i for i, f in enumerate(step.forms["input"]) if f.name == "mask")
    ins[mask] = (np.zeros((1, 1, 1, 464), np.float32) if fault == "fp32 data"
                 else np.zeros((1, 1, 1, 449), np.float16))
    with pytest.raises(NeuronError) as err:
        step.graph.run(ins, outs)
    said = str(err.value)
    assert f"NeuronRuntime_setInput failed for decoder_step.dla input slot {mask} (mask, " in said
    assert "\n" not in said


def test_qos_is_the_public_ports_unless_turned_off(bundle):
    qos = bundle / "encoder.dla.qos"
    qos.unlink(missing_ok=True)
    assert DlaBackend.from_bundle(bundle, str(standin_library("v1"))).describe()["qos"] == "on"
    assert qos.read_text() == "preference 0 priority 2 boost 100 policy 1\n"
    qos.unlink()
    assert DlaBackend.from_bundle(bundle, str(standin_library("v2")), neuron_qos=False).describe()["qos"] == "off"
    assert not qos.exists()


@pytest.mark.parametrize("api", ["v1", "v2"])
def test_a_dropped_backend_releases_its_runtimes(bundle, api):
    """A model loaded anew frees what the runtime held for the old one (a test process once kept GBs of them)."""
    gc.disable()
    try:
        backend = DlaBackend.from_bundle(bundle, str(standin_library(api)))
        live = sys.modules["neuron_compute"]._runtimes      # the STAND-IN's created runtimes, in this process
        held = len(live)
        del backend
        assert held >= 2 and len(live) == held - 2
    finally:
        gc.enable()


def test_the_library_is_found_by_its_soname_through_the_loaders_own_search(tmp_path):
    """Where none of the paths exists (this PC), the loader's lookup finds a library on LD_LIBRARY_PATH."""
    if first_present() is not None:
        pytest.skip("this machine has a Neuron runtime at one of the known paths")
    build_standin(tmp_path, "WITH_V1", name=SONAMES[1])
    code = ("from device.runner.neuron.neuron_runtime import open_library; from device.spec.neuron_paths import "
            "runtime_probe; print(open_library()[0], runtime_probe()['version'])")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "LD_LIBRARY_PATH": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [SONAMES[1], "0.0.1"]
    assert tried()[-2:] == [f"{s} (the loader's search)" for s in SONAMES]
    assert SEARCH_ORDER[-4:] == ("/usr/lib/aarch64-linux-gnu/libneuronusdk_runtime.mtk.so.8",
                                 "/usr/lib/aarch64-linux-gnu/libneuronusdk_runtime.mtk.so",
                                 "/usr/lib64/libneuronusdk_runtime.mtk.so.8", "/usr/lib64/libneuronusdk_runtime.mtk.so")


@pytest.fixture(scope="module")
def not_a_dla(bundle, tmp_path_factory):
    """The compiled bundle with an encoder.dla that is no .dla (the other files linked, not copied)."""
    folder = tmp_path_factory.mktemp("not-a-dla")
    for f in bundle.iterdir():
        if f.suffix != ".calls" and f.name != "encoder.dla":
            os.symlink(f, folder / f.name)
    (folder / "encoder.dla").write_bytes(b"this is not a compiled network")
    return folder


def test_a_dla_that_is_a_plain_tflite_file_is_accepted_by_the_standin(bundle, tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    for f in bundle.iterdir():
        if f.suffix != ".calls":
            os.symlink(f, folder / f.name)
    plain = (bundle / "encoder.dla").read_bytes()[len(b"STAND-IN DLA of "):]
    assert plain[4:8] == b"TFL3"
    (folder / "encoder.dla").unlink()
    (folder / "encoder.dla").write_bytes(plain)
    assert DlaBackend.from_bundle(folder, str(standin_library("v2")))._graphs["encoder"].graph.input_sizes == [
        80 * 3000 * 4]


@pytest.mark.parametrize("case", ["neither API", "create fails", "not a .dla"])
def test_each_runtime_failure_is_one_line_and_the_runner_keeps_serving(case, bundle, not_a_dla, tmp_path):
    from tests.device.link_helpers import RawRunner
    from tests.device.runner.serve.test_agent import error

    lib, model, said = {
        "neither API": (build_empty(tmp_path), bundle, "exports neither Runtime API"),
        "create fails": (build_standin(tmp_path, "FAIL_CREATE"), bundle, "NeuronRuntime_create failed"),
        "not a .dla": (standin_library("v1"), not_a_dla, "NeuronRuntime_loadNetworkFromFile failed for encoder.dla"),
    }[case]
    r = RawRunner("--backend", "dla", "--model", str(model), "--neuron-lib", str(lib))
    try:
        for _ in range(2):      # every request hears why, and the runner serves on
            r.request({"op": "hello", "protocol": P.PROTOCOL})
            ev = error(r)
            assert said in ev["message"] and "\n" not in ev["message"] and " — " in ev["message"]
    finally:
        r.close()


def test_a_run_failing_mid_decode_keeps_the_partial_transcript(bundle, tmp_path, model, clip_mels):
    lib = build_standin(tmp_path, "WITH_V1", "FAIL_RUN_AT=12", name="libneuronusdk_runtime.mtk.so.8")
    r = transcribe(str(AUDIO / "test_en.wav"), "--device", f"local?backend=dla&neuron_lib={lib}", "--model",
                   str(bundle), "--language", "en", "--json")
    assert r.returncode == 2 and "NeuronRuntime_inference failed for decoder_step.dla with error code 5" in r.stderr
    doc = json.loads(r.stdout)
    got, want = [s["token"] for s in doc["steps"]], [s.token for s in reference(model, clip_mels, "test_en.wav",
                                                                                  "en").steps]
    assert doc["complete"] is False and 0 < len(got) < len(want)
    assert got == want[:len(got)] and doc["text"].strip()
