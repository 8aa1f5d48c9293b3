"""The `dla` backend on a STAND-IN Neuron runtime.

No Neuron runtime and no APU exist here, so these tests build a STAND-IN `libneuronusdk_runtime.mtk.so.8`
(tests/device/runner/standin/: the Runtime V1 and V2 functions and structs, in C) that computes: it runs, in LiteRT,
the TFLite graph the stand-in `ncc-tflite` (tests/device/toolchain/ncc_standin.py) stored in each `.dla`. So the
tokens are checked, not just the plumbing, and the stand-in counts every create and run per graph, so a backend
that quietly ran the TFLite graphs itself would fail. What only a board can show: the real runtime's error codes,
sizes and padding, and that the MDLA computes the same tokens.
"""
from __future__ import annotations

import json

import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from core.errors import ModelError
from core.model.tokenizer import WhisperTokenizer
from device import protocol as P
from device.runner.bundle import read_bundle
from device.runner.load import LoadedModel
from device.runner.neuron.dla_backend import DlaBackend
from device.runner.neuron.neuron_runtime import NeuronError
from device.runner.neuron.neuron_slots import CONTRACT
from device.runner.serve.served_model import cache_of
from device.spec.neuron_paths import SEARCH_ORDER, SONAMES
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library
from tests.device.runner.standin.build import build_empty, build_standin


@pytest.fixture(scope="module")
def dla_bundle():
    """The installed weights exported as a TFLite bundle, compiled by the stand-in ncc-tflite (one per process)."""
    return compiled_dla_bundle()


@pytest.fixture(scope="module")
def standin():
    """The STAND-IN runtime exporting both APIs, named libneuronusdk_runtime.mtk.so.8."""
    return standin_library("v1+v2")


def calls(bundle, graph: str) -> list[str]:
    path = bundle / f"{graph}.dla.calls"
    lines = path.read_text().split() if path.exists() else []
    path.unlink(missing_ok=True)
    return lines


def decode(backend, bundle, mels, **opts) -> Transcript:
    b = read_bundle(bundle)
    model = LoadedModel(backend, WhisperTokenizer.from_file(b.tokenizer_path, b.dims.n_vocab), b.weights_sha256, "t")
    t = Transcript()
    for ev in decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(**opts)):
        t.add(ev)
    return t


def test_compile_records_the_slot_contract_and_the_flags_of_each_graph(dla_bundle):
    dla = json.loads((dla_bundle / "model.json").read_text())["dla"]
    assert dla["contract"] == CONTRACT
    graphs = dla["graphs"]
    assert set(graphs) == {"encoder", "decoder_step", "decoder_step_attention"}
    step = graphs["decoder_step"]
    assert [s["name"] for s in step["inputs"]] and {s["name"] for s in step["outputs"]} == {"logits", "new_k", "new_v"}
    assert next(s for s in step["inputs"] if s["name"] == "self_k") == {"name": "self_k", "shape": [6, 1, 448, 512],
                                                                      "dtype": "FLOAT32"}
    assert graphs["encoder"]["inputs"] == [{"name": "mel", "shape": [1, 80, 3000], "dtype": "FLOAT32"}]
    for g in graphs.values():
        assert {"--relax-fp32", "--opt-accuracy", "--suppress-input", "--suppress-output"} <= set(g["flags"])
    attention = graphs["decoder_step_attention"]
    assert attention["outputs"][-1] == {"name": "attention", "shape": [8, 1, 1500], "dtype": "FLOAT32"}
    assert attention["inputs"] == step["inputs"] and len(attention["alignment_heads"]) == 8


def test_the_dla_gives_the_reference_tokens_and_each_graph_runs_on_the_runtime(dla_bundle, standin, model,
                                                                                 clip_mels):
    calls(dla_bundle, "encoder"), calls(dla_bundle, "decoder_step")
    backend = DlaBackend.from_bundle(dla_bundle, str(standin))
    mels = clip_mels("test_en.wav")
    got = decode(backend, dla_bundle, mels, language="en")
    want = Transcript()
    for ev in decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(language="en")):
        want.add(ev)
    assert got.tokens == want.tokens and "ask not what your country" in got.text
    # once per window for the encoder; once per decoded position for the step: the SOT prefix and every token
    assert calls(dla_bundle, "encoder") == ["create", "run"]
    step_calls = calls(dla_bundle, "decoder_step")
    assert step_calls[0] == "create" and step_calls.count("create") == 1
    # the 4 prefix tokens <|sot|><|en|><|transcribe|><|notimestamps|>, then every sampled token but the final EOT
    assert step_calls.count("run") == 4 + len(got.steps) - 1
    detail = backend.describe()
    assert (detail["io"], detail["create"], detail["cache_dtype"]) == ("native", "plain", "float16")
    # the bytes as held: the self cache and the window's cross state in fp16 on this path
    assert cache_of(backend) == {"max_len": 448, "bytes_per_token": 2 * 6 * 512 * 2, "dtype": "float16"}
    b = read_bundle(dla_bundle)
    tokenizer = WhisperTokenizer.from_file(b.tokenizer_path, b.dims.n_vocab)
    encoded = next(ev for ev in decode_windows(backend, tokenizer, mels[:1], DecodeOptions(language="en",
                                                                                             max_tokens=1))
                   if ev.type == "encoded")
    assert (encoded.cross_dtype, encoded.cross_bytes) == ("float16", 2 * 6 * 1500 * 512 * 2)
    step = detail["graphs"][1]
    assert (step["graph"], step["file"], step["runs_on"]) == ("decoder_step", "decoder_step.dla", "dla")
    mask = next(s for s in step["slots"] if s["name"] == "mask")
    # the v1+v2 build pads the inputs' rows to 16 elements, as a runtime with conversion suppressed reports them
    assert (mask["element"], mask["size"], mask["padded_size"], mask["row"], mask["pitch"]) == (
        "float16", 449 * 2, 464 * 2, 449, 464)


def test_hello_names_the_runtime_library_and_its_version_where_it_reports_one(dla_bundle, standin, tmp_path):
    """The stand-in reports 0.0.1 (no real runtime is that old); one built without NeuronRuntime_getVersion
    reports none, and the runner still serves."""
    detail = DlaBackend.from_bundle(dla_bundle, str(standin)).describe()
    assert (detail["library"], detail["library_version"], detail["api"]) == (str(standin), "0.0.1", "V1")
    assert detail["compiler_version"] == "ncc-tflite stand-in, version 0.0-test" and "version_warning" not in detail
    quiet = build_standin(tmp_path, "NO_VERSION")
    assert "library_version" not in DlaBackend.from_bundle(dla_bundle, str(quiet)).describe()


def with_model_json_edited(dla_bundle, tmp_path, edit) -> object:
    """The compiled bundle with its model.json edited (its files linked, not copied)."""
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in dla_bundle.iterdir():
        if f.suffix != ".calls" and f.name != "model.json":
            (bad / f.name).symlink_to(f)
    doc = json.loads((dla_bundle / "model.json").read_text())
    edit(doc)
    (bad / "model.json").write_text(json.dumps(doc))
    return bad


def test_a_slot_the_runtime_sizes_otherwise_is_refused_naming_the_file_the_slot_and_both_sizes(
        dla_bundle, standin, tmp_path):
    bad = with_model_json_edited(dla_bundle, tmp_path, lambda doc: doc["dla"]["graphs"]["decoder_step"]["inputs"][1]["shape"]
                  .__setitem__(-1, 500))
    with pytest.raises(ModelError, match=r"^decoder_step.dla input slot 1 \(\w+ FLOAT32 \[.*, 500\]\) is \d+ bytes in "
                                         r"the runtime \(padded \d+\): not \d+ elements .* — recompile it"):
        DlaBackend.from_bundle(bad, str(standin))


def test_a_bundle_compiled_before_the_slot_contract_is_refused_with_the_recompile_line(dla_bundle, standin, tmp_path):
    bad = with_model_json_edited(dla_bundle, tmp_path, lambda doc: doc["dla"].pop("contract"))
    with pytest.raises(ModelError) as err:
        DlaBackend.from_bundle(bad, str(standin))
    assert "compiled before the slot contract" in str(err.value) and "\n" not in str(err.value)
    assert "`whisperkv compile DIR --soc SOC`" in err.value.fix


def test_a_library_without_the_runtime_symbols_is_refused(dla_bundle, tmp_path):
    with pytest.raises(NeuronError, match=r"is not a Neuron runtime library: it exports neither Runtime API \(V1 "
                                          r"lacks NeuronRuntime_create, .* and 6 more; V2 lacks "
                                          r"NeuronRuntimeV2_create"):
        DlaBackend.from_bundle(dla_bundle, str(build_empty(tmp_path)))


def test_a_missing_library_and_a_failing_create_name_the_path_and_the_code(dla_bundle, tmp_path):
    with pytest.raises(NeuronError, match="/nowhere/libneuron_runtime.so does not exist.*neuron_lib=PATH"):
        DlaBackend.from_bundle(dla_bundle, "/nowhere/libneuron_runtime.so")
    failing = build_standin(tmp_path, "FAIL_CREATE")
    with pytest.raises(NeuronError, match="NeuronRuntime_create failed for encoder.dla with error code 4"):
        DlaBackend.from_bundle(dla_bundle, str(failing))
    with pytest.raises(NeuronError, match="NeuronRuntime_create_with_options failed for encoder.dla with error code 4"):
        DlaBackend.from_bundle(dla_bundle, str(failing), neuron_create="options")
    with pytest.raises(NeuronError, match="NeuronRuntimeV2_create failed for encoder.dla with error code 4"):
        DlaBackend.from_bundle(dla_bundle, str(failing), neuron_api="v2")


def test_a_run_that_fails_mid_decode_ends_the_decode_with_the_code(dla_bundle, tmp_path, clip_mels):
    backend = DlaBackend.from_bundle(dla_bundle, str(build_standin(tmp_path, "FAIL_RUN_AT=6")))
    with pytest.raises(NeuronError, match="NeuronRuntime_inference failed for decoder_step.dla with error code 5"):
        decode(backend, dla_bundle, clip_mels("test_en.wav"), language="en")


def test_the_cli_transcribes_on_the_dla_through_the_local_runner(dla_bundle, standin):
    """As a user runs it: the runner loads the compiled bundle on the (stand-in) runtime named in the URL."""
    import subprocess
    import sys

    from tests.conftest import AUDIO, ROOT

    calls(dla_bundle, "encoder"), calls(dla_bundle, "decoder_step")      # what earlier tests left
    url = f"local?backend=dla&model={dla_bundle}&neuron_lib={standin}"
    r = subprocess.run([sys.executable, "-m", "cli", "transcribe", str(AUDIO / "test_en.wav"), "--device", url],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert "ask not what your country can do for you" in r.stdout and "backend dla" in r.stderr
    assert (f"ran on the NPU (encoder.dla, decoder_step.dla on the Neuron runtime) | Neuron runtime V1 0.0.1, "
            f"native I/O ({standin})]") in r.stderr
    assert calls(dla_bundle, "encoder") == ["create", "run"]


def test_a_runner_asked_for_dla_without_a_runtime_says_where_it_looked_and_keeps_serving(dla_bundle):
    from tests.device.link_helpers import RawRunner
    from tests.device.runner.serve.test_agent import error

    r = RawRunner("--backend", "dla", "--model", str(dla_bundle))
    try:
        for _ in range(2):      # every request hears why, and the runner serves on
            r.request({"op": "hello", "protocol": P.PROTOCOL})
            ev = error(r)
            assert ev["code"] == "model_missing" and "no Neuron runtime library here" in ev["message"]
            assert "neuron_lib=PATH" in ev["message"] and all(p in ev["message"] for p in SEARCH_ORDER + SONAMES)
    finally:
        r.close()
