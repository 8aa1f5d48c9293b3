"""The integer TFLite bundle (`--dtype mixed`: the decoder step's blocks 0-1 and head a16w8, quantized by
ai-edge-quantizer on espeak-ng speech, blocks 2-5 in float; the encoder with fp16 weights): it passes the MDLA
check, LiteRT's integer kernels give fp32's tokens on two bundled clips, and `whisperkv compile` relaxes fp32
only when a graph holds float ops (with the STAND-IN ncc-tflite of test_compile.py)."""
import json
import sys

import pytest

from cli.main import main
from core.errors import ModelError
from core.model.audio import load_audio
from device.graphs.tflite_read import io, tensors
from device.toolchain.check_dla import check
from device.toolchain.compile import compile_bundle
from device.toolchain.int_quantize import float_ops
from tests.conftest import AUDIO
from tests.device.bundle_helpers import integer_bundle
from tests.device.toolchain.test_compile import stand_in_ncc  # noqa: F401  (the stand-in compiler)

# the calibrated integer bundle is built once per test process (tests/device/bundle_helpers.py): under
# pytest-xdist's --dist loadgroup (.ci/run) every module that needs it runs in the same worker
pytestmark = pytest.mark.xdist_group("integer-bundle")


@pytest.fixture(scope="module")
def bundle():
    return integer_bundle("mixed", "kv")


def test_the_mixed_bundle_passes_the_mdla_check_with_the_heads_weights_in_int8(bundle):
    doc = json.loads((bundle / "model.json").read_text())
    assert doc["dtype"] == "mixed" and doc["formats"] == ["tflite"] and doc["cross"] == "kv"
    reports = check(bundle)
    assert [r.graph for r in reports] == ["encoder_tflite", "decoder_step_tflite"]
    assert all(r.ok for r in reports), [v for r in reports for v in r.violations][:3]
    step = (bundle / "decoder_step.tflite").read_bytes()
    assert float_ops(step)["FULLY_CONNECTED"] == 4 * 8          # blocks 2-5: 8 linear layers each
    by_name = {t.name: t for t in tensors(step)}
    assert {by_name[n].dtype for n in io(step)["outputs"]} == {"INT16"}
    int8 = [t for t in by_name.values() if t.dtype == "INT8" and t.const]
    assert len(int8) == 2 * 8 + 1 and max(t.nbytes for t in int8) == 51865 * 512     # blocks 0-1, the LM head
    encoder = (bundle / "encoder.tflite").read_bytes()
    assert float_ops(encoder) and any(t.dtype == "FLOAT16" and t.const for t in tensors(encoder))


def test_a16w8_keeps_only_the_layer_norms_in_float():
    """The step's 19 layer norms (6 blocks × 3, and the head's) in float, everything else int16 × int8."""
    step = (integer_bundle("a16w8", "kv") / "decoder_step.tflite").read_bytes()
    assert float_ops(step) == {"MEAN": 2 * 19, "SUB": 19, "MUL": 3 * 19, "ADD": 2 * 19, "RSQRT": 19}


def _tokens(backend, tokenizer, clip):
    from core.decode.decoding import decode_windows
    from core.decode.options import DecodeOptions
    from core.model.mel import content_frames, mel_windows

    audio = load_audio(AUDIO / clip)
    events = decode_windows(backend, tokenizer, mel_windows(audio), DecodeOptions(), n_frames=content_frames(audio))
    return [e.token for e in events if e.type == "token"]


@pytest.mark.parametrize("clip", ["test_en.wav", "test_zh.wav"])
def test_integer_kernels_give_fp32s_tokens(bundle, model, clip):
    from device.runner.tflite.tflite_backend import TfliteBackend

    q = TfliteBackend.from_bundle(bundle)
    assert q.describe()["weights"] == "mixed"
    fp32 = TfliteBackend.from_weights(model.weights)
    assert _tokens(q, model.tokenizer, clip) == _tokens(fp32, model.tokenizer, clip)


def test_mixed_absorbed_quantizes_only_the_head_and_keeps_fp32s_tokens(model):
    from device.runner.tflite.tflite_backend import TfliteBackend

    absorbed = integer_bundle("mixed", "absorbed")
    step = (absorbed / "decoder_step.tflite").read_bytes()
    int8 = [t for t in tensors(step) if t.dtype == "INT8" and t.const]
    assert len(int8) == 1 and int8[0].nbytes == 51865 * 512              # the LM head only
    q = TfliteBackend.from_bundle(absorbed)
    assert q.describe()["cross"] == "absorbed"
    fp32 = TfliteBackend.from_weights(model.weights, cross="absorbed")
    assert _tokens(q, model.tokenizer, "test_en.wav") == _tokens(fp32, model.tokenizer, "test_en.wav")


def test_cli_transcribes_test_zh_through_the_integer_bundle(bundle, capsys):
    assert main(["transcribe", str(AUDIO / "test_zh.wav"), "--backend", "tflite", "--model", str(bundle),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["language"] == "zh" and doc["stop_reason"] == "eot" and doc["text"].strip()


def test_compile_flags_follow_the_bundle_dtype_and_its_float_ops(bundle, stand_in_ncc, tmp_path,  # noqa: F811
                                                                 monkeypatch):
    import shutil

    from device.toolchain import int_quantize

    b = tmp_path / "b"
    shutil.copytree(bundle, b)
    # the encoder computes in float: relaxed to fp16
    assert "--relax-fp32" in compile_bundle(b).flags
    # an integer bundle with nothing in float takes no --relax-fp32 (the float-op count stubbed to none)
    monkeypatch.setattr(int_quantize, "float_ops", lambda data: {})
    result = compile_bundle(b)
    assert "--relax-fp32" not in result.flags and "--opt-accuracy" not in result.flags
    calls = [json.loads(line) for line in stand_in_ncc.read_text().splitlines()]
    assert "--relax-fp32" in calls[1] and "--relax-fp32" not in calls[-1]


def test_without_the_extra_one_line_naming_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ai_edge_quantizer", None)
    with pytest.raises(ModelError, match="ai-edge-quantizer"):
        from device.toolchain.export import check_request
        check_request("a16w8", ("tflite",))
    assert main(["export", "--out", str(tmp_path / "b"), "--format", "tflite", "--dtype", "a16w8"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "whisperkv-studio[export]" in err[0]


def test_integer_dtypes_are_tflite_only():
    from device.toolchain.export import check_request

    with pytest.raises(ModelError, match="TFLite only"):
        check_request("a8w8", ("onnx", "tflite"))


def test_without_espeak_ng_one_clear_error(monkeypatch, tmp_path):
    from device.toolchain.calibration import speech

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ModelError, match="espeak-ng"):
        speech(limit=1)


def test_the_check_names_each_quantized_form_and_refuses_one_off_the_table(bundle, monkeypatch):
    from device.toolchain import mdla_ops

    step = check(bundle / "decoder_step.tflite")[0]
    assert {"tflite": "FULLY_CONNECTED", "mdla": "FULLY_CONNECTED int16xint8", "count": 17} in step.ops
    monkeypatch.setattr(mdla_ops, "QUANTIZED_FORMS", {("INT8", "INT8"): "np8-types"})
    bad = check(bundle / "decoder_step.tflite")[0]
    assert not bad.ok and {v.kind for v in bad.violations} == {"quantized_form"}
