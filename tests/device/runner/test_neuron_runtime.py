"""MediaTek's Neuron runtime as the images name and expose it, on STAND-IN runtime libraries.

The stand-ins (tests/device/runner/standin/, built as `libneuronusdk_runtime.mtk.so.8`, the Yocto image's name)
export Runtime V1 only, V2 only, or both, and one reports padded sizes larger than the tensors and lacks V1's
get*Number (older headers). Each computes in LiteRT the graph its `.dla` holds, so each build must give the
NumPy reference's tokens. What only a board can show: the real library's symbols, sizes, codes and QoS effect.
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from device import protocol as P
from device.runner import neuron_v1
from device.runner.bundle import read_bundle
from device.runner.dla_backend import DlaBackend
from device.runner.neuron_paths import SEARCH_ORDER, first_present, runtime_probe
from device.runner.neuron_runtime import NeuronError, NeuronLibrary, find_library, major, version_warning
from tests.conftest import AUDIO, ROOT
from tests.device.bundle_helpers import STANDIN_BUILDS, compiled_dla_bundle, standin_library
from tests.device.runner.standin.build import build_empty, build_standin
from tests.device.runner.test_dla_backend import decode

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
            find_library()
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
    with pytest.raises(NeuronError, match=r"create_with_options failed .* compiled by ncc-tflite 8.x .* — recompile "
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
    assert (ran["where"], ran["library"], ran["library_version"], ran["api"]) == ("npu", str(lib), "0.0.1", api)


def test_test_zh_gives_the_reference_tokens_on_the_v1_build(bundle, model, clip_mels):
    """test_en goes through every build above; test_zh through the API the runner prefers, in this process."""
    got = decode(DlaBackend.from_bundle(bundle, str(standin_library("v1"))), bundle, clip_mels("test_zh.wav"),
                 language="zh")
    assert got.tokens == reference(model, clip_mels, "test_zh.wav", "zh").tokens


def test_padded_sizes_are_larger_but_the_buffers_are_the_tensors_own(bundle):
    backend = DlaBackend.from_bundle(bundle, str(standin_library("padded")))
    graph = backend._encoder.graph
    assert graph.padded_sizes("Input") == [80 * 3008 * 4] and graph.input_sizes == [80 * 3000 * 4]
    step = backend._step.graph
    assert any(p > s for p, s in zip(step.padded_sizes("Input"), step.input_sizes))


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


def test_suppressing_conversion_on_fp32_slots_is_refused_by_the_v1_runtime(bundle, monkeypatch):
    """The mistake fails: with conversion suppressed the MDLA takes no fp32 slot (the Genio 720 runner's graphs
    had fp16 slots); ours are fp32, so the backend must keep conversion on."""
    suppressed = neuron_v1.env_options()
    suppressed.suppressInputConversion = suppressed.suppressOutputConversion = True
    monkeypatch.setattr(neuron_v1, "env_options", lambda threads=1: suppressed)
    with pytest.raises(NeuronError, match="NeuronRuntime_loadNetworkFromFile failed for encoder.dla with error code 4"):
        DlaBackend.from_bundle(bundle, str(standin_library("v1")))


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
    assert DlaBackend.from_bundle(folder, str(standin_library("v2")))._encoder.graph.input_sizes == [80 * 3000 * 4]


@pytest.mark.parametrize("case", ["neither API", "create fails", "not a .dla"])
def test_each_runtime_failure_is_one_line_and_the_runner_keeps_serving(case, bundle, not_a_dla, tmp_path):
    from tests.device.link_helpers import RawRunner
    from tests.device.runner.test_agent import error

    lib, model, said = {
        "neither API": (build_empty(tmp_path), bundle, "exports neither Runtime API"),
        "create fails": (build_standin(tmp_path, "FAIL_CREATE"), bundle, "NeuronRuntime_create_with_options failed"),
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
