"""The tflite backend (the real LiteRT interpreter) against the NumPy reference, and its delegate handling.

No Neuron delegate exists on this PC: the delegate tests use a missing path and a file that is not a
delegate library (a stand-in for a broken board install); both must fail loudly, never fall back."""
import subprocess
import sys

import numpy as np
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from core.model.backend import Backend
from core.model.encoder_cache import EncoderCache, cross_key
from core.model.placement import of_backend
from device.runner.backends import BackendError, make_backend
from device.runner.tflite.tflite_backend import DelegateError, op_placement, refuse_stable_delegate
from tests.device.runner.compare_helpers import Compare, tokens

CLIPS = ["test_en.wav", "test_zh.wav", "en_arctic_slt_a0009.wav", "en_librivox_sense_sensibility_0870.wav",
         "en_asterisk_hello-world.wav", "en_asterisk_demo-congrats.wav"]
TOL = 1e-3
# The encoder's cross K/V: LiteRT's fp32 kernels (XNNPACK) round 2-3x coarser than NumPy's BLAS and the
# last encoder layers amplify it on test_zh.wav to 1.65e-3 (tests/device/graphs explains); the step logits,
# which decide the tokens, stay within TOL.
ENCODER_TOL = 2e-3


@pytest.fixture(scope="module")
def tflite_backend(model):
    return make_backend("tflite", model.weights)


@pytest.mark.parametrize("clip", CLIPS)
def test_tokens_equal_numpy_on_every_clip_and_logits_within_tolerance(clip, model, tflite_backend, clip_mels,
                                                                      encoder_cache):
    mels = clip_mels(clip)
    both = Compare(model.backend, tflite_backend)
    ref = list(decode_windows(both, model.tokenizer, mels, DecodeOptions(), encoder_cache=encoder_cache))
    assert max(both.step_diffs) <= TOL, max(both.step_diffs)
    assert max(both.kv_diffs) <= TOL

    own = EncoderCache(1 << 28)      # the tflite encoder's own cross K/V, decoded end to end
    ours = list(decode_windows(tflite_backend, model.tokenizer, mels, DecodeOptions(), encoder_cache=own))
    assert tokens(ours) == tokens(ref)
    cross, cross_ref = own.get(cross_key(tflite_backend, mels[0])), encoder_cache.get(cross_key(model.backend, mels[0]))
    assert max(float(np.abs(a - b).max()) for a, b in zip(cross, cross_ref)) <= ENCODER_TOL


def test_uncached_reference_recomputes_through_the_static_step_graph(model, tflite_backend, clip_mels):
    mels = clip_mels("en_asterisk_hello-world.wav")
    cache = EncoderCache(1 << 28)
    cached = list(decode_windows(tflite_backend, model.tokenizer, mels, DecodeOptions(cache=True), encoder_cache=cache))
    uncached = list(decode_windows(tflite_backend, model.tokenizer, mels, DecodeOptions(cache=False),
                                   encoder_cache=cache))
    assert tokens(uncached) == tokens(cached) and len(tokens(cached)) > 2


def test_it_satisfies_the_backend_interface_and_reports_where_ops_run(tflite_backend):
    assert isinstance(tflite_backend, Backend) and tflite_backend.name == "tflite"
    detail = tflite_backend.describe()
    assert detail["delegate"] is None and detail["interpreter"] in ("ai_edge_litert", "tflite_runtime")
    enc, step = detail["ops"]
    assert (enc["graph"], step["graph"]) == ("encoder", "decoder_step")
    assert enc["ops"] > 200 and step["ops"] > 400
    assert enc["delegated"] + enc["cpu"] == enc["ops"]


def test_op_placement_counts_the_partition_a_delegate_node_replaced():
    ops = [{"index": 0, "op_name": "FULLY_CONNECTED", "inputs": [0, 1, -1], "outputs": [2]},
           {"index": 1, "op_name": "GELU", "inputs": [2], "outputs": [3]},
           {"index": 2, "op_name": "GATHER", "inputs": [3, 4], "outputs": [5]},
           {"index": 3, "op_name": "DELEGATE", "inputs": [0, 1], "outputs": [3]}]
    p = op_placement("g", ops)
    assert (p.total, p.delegated, p.cpu, p.delegate_kernels) == (3, 2, 1, 1)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # LiteRT's Delegate.__del__
def test_a_missing_delegate_is_an_error_naming_its_path(model):
    with pytest.raises(DelegateError, match="/nonexistent/libneuron_stable_delegate.so"):
        make_backend("tflite", model.weights, delegate="/nonexistent/libneuron_stable_delegate.so")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_file_that_is_not_a_delegate_library_is_refused(model, tmp_path):
    """Stand-in for a broken board install: a file at the delegate path that is not a shared library."""
    bogus = tmp_path / "libneuron_stable_delegate.so"
    bogus.write_bytes(b"not an ELF file")
    with pytest.raises(DelegateError, match=str(bogus)):
        make_backend("tflite", model.weights, delegate=str(bogus))


def test_a_delegate_needs_the_tflite_backend(model):
    with pytest.raises(BackendError, match="needs the tflite backend"):
        make_backend("numpy", model.weights, delegate="/usr/lib/libneuron_stable_delegate.so")


def _library(tmp_path, name: str, symbols: list[str]) -> str:
    src = tmp_path / f"{name}.c"
    src.write_text("".join(f"const int {s} = 1;\n" for s in symbols))
    out = tmp_path / name
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return str(out)


def test_a_stable_delegate_is_refused_in_one_line_naming_the_dla_backend(model, tmp_path):
    """STAND-IN for MediaTek's /usr/lib/libneuron_stable_delegate.so: a library exporting only
    TFL_TheStableDelegate, as the stable delegate on Genio IoT Yocto does."""
    stable = _library(tmp_path, "libneuron_stable_delegate.so", ["TFL_TheStableDelegate"])
    with pytest.raises(DelegateError) as err:
        make_backend("tflite", model.weights, delegate=stable)
    assert "TFL_TheStableDelegate" in err.value.problem and "\n" not in str(err.value)
    assert "--backend dla" in err.value.fix


def test_an_external_delegate_library_is_not_taken_for_a_stable_one(tmp_path):
    both = _library(tmp_path, "libboth.so", ["TFL_TheStableDelegate", "tflite_plugin_create_delegate"])
    assert refuse_stable_delegate(both) is None
    assert refuse_stable_delegate(str(tmp_path / "missing.so")) is None     # load_delegate reports it


def test_the_images_tflite_runtime_is_preferred_and_named(model, clip_mels, tmp_path, monkeypatch):
    """Both interpreters importable: a `tflite_runtime` package that is ai_edge_litert's interpreter under the
    image's module name (the real tflite-runtime wheel needs NumPy 1.x) runs the graphs, and is the one used."""
    shim = tmp_path / "tflite_runtime"
    shim.mkdir()
    (shim / "__init__.py").write_text("")
    (shim / "interpreter.py").write_text("from ai_edge_litert.interpreter import Interpreter, load_delegate, "
                                         "OpResolverType  # noqa: F401\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.partition(".")[0] == "tflite_runtime"]:
        monkeypatch.delitem(sys.modules, name)
    backend = make_backend("tflite", model.weights)
    assert backend.describe()["interpreter"] == "tflite_runtime"
    assert sys.modules["tflite_runtime.interpreter"].__file__ == str(shim / "interpreter.py")
    assert of_backend(backend).label == "the CPU, in tflite_runtime"
    mels = clip_mels("en_asterisk_hello-world.wav")
    ours = list(decode_windows(backend, model.tokenizer, mels, DecodeOptions()))
    ref = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions()))
    assert tokens(ours) == tokens(ref) and len(tokens(ref)) > 2
