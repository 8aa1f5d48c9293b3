"""`whisperkv export` then `check-dla` as a user runs them (all formats, and TFLite alone), and
`transcribe --backend onnx` vs numpy."""
import json

import pytest

from tests.cli.test_transcribe import one_clear_line, whisperkv
from tests.conftest import AUDIO


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "b"
    r = whisperkv("export", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out, r


def test_export_then_check_dla_passes(exported):
    out, r = exported
    assert "decoder_step.onnx" in r.stdout and "check-dla" in r.stderr
    assert json.loads((out / "model.json").read_text())["dtype"] == "fp32"
    c = whisperkv("check-dla", str(out))
    assert c.returncode == 0, c.stdout + c.stderr
    assert "== encoder (encoder.onnx): PASS" in c.stdout and "== decoder_step (decoder_step.onnx): PASS" in c.stdout
    assert "== encoder_tflite (encoder.tflite): PASS" in c.stdout
    assert "== decoder_step_tflite (decoder_step.tflite): PASS" in c.stdout
    assert "MDLA 5.3 check: PASS" in c.stdout
    j = whisperkv("check-dla", str(out), "--json")
    assert j.returncode == 0 and json.loads(j.stdout)["ok"] is True


def test_export_tflite_alone_then_check_dla_passes(tmp_path):
    out = tmp_path / "b"
    r = whisperkv("export", "--out", str(out), "--format", "tflite")
    assert r.returncode == 0, r.stderr
    assert "decoder_step.tflite" in r.stdout and "onnx" not in r.stdout and "(tflite)" in r.stderr
    doc = json.loads((out / "model.json").read_text())
    assert set(doc["graphs"]) == {"encoder_tflite", "decoder_step_tflite"} and doc["formats"] == ["tflite"]
    # What a TFLite runner needs besides the graphs: the CPU-side tables, the tokenizer, the manifest.
    assert {"token_embedding.npy", "positional_embedding.npy", "tokenizer.json"} <= set(doc["files"])
    assert doc["dims"]["n_vocab"] == 51865 and doc["special_tokens"]["eot"] == 50257
    c = whisperkv("check-dla", str(out))
    assert c.returncode == 0, c.stdout + c.stderr
    assert "TFLite op" in c.stdout and "ONNX op" not in c.stdout and "MDLA 5.3 check: PASS" in c.stdout


def test_export_errors_name_the_fix(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = whisperkv("export", "--out", str(blocker / "b"))
    one_clear_line(r)
    assert "writable --out" in r.stderr
    r = whisperkv("export", "--out", str(tmp_path / "b8"), "--format", "tflite", "--dtype", "int8")
    assert "--dtype fp16" in one_clear_line(r)
    r = whisperkv("check-dla", str(tmp_path / "missing"))
    one_clear_line(r)
    assert "whisperkv export --out DIR" in r.stderr


def test_transcribe_backend_onnx_matches_numpy_tokens():
    docs = {}
    for backend in ("onnx", "numpy"):
        r = whisperkv("transcribe", str(AUDIO / "test_zh.wav"), "--json", "--backend", backend)
        assert r.returncode == 0, r.stderr
        docs[backend] = json.loads(r.stdout)
    assert docs["onnx"]["backend"] == "onnx" and docs["numpy"]["backend"] == "numpy"
    assert docs["onnx"]["tokens"] == docs["numpy"]["tokens"] and docs["onnx"]["tokens"]
    assert [s["token"] for s in docs["onnx"]["steps"]] == [s["token"] for s in docs["numpy"]["steps"]]


def test_unknown_backend_is_one_clear_line():
    r = whisperkv("transcribe", str(AUDIO / "test_zh.wav"), "--backend", "tpu")
    one_clear_line(r)
    assert "use auto or one of" in r.stderr


def test_export_cross_absorbed_passes_check_dla_and_transcribes_the_default_tokens(tmp_path):
    out = tmp_path / "b"
    r = whisperkv("export", "--out", str(out), "--cross", "absorbed")
    assert r.returncode == 0, r.stderr
    assert "absorbed-cross bundle" in r.stderr and "passes the MDLA 5.3 check" in r.stderr
    assert json.loads((out / "model.json").read_text())["cross"] == "absorbed"
    c = whisperkv("check-dla", str(out))
    assert c.returncode == 0 and "MDLA 5.3 check: PASS" in c.stdout, c.stdout
    assert "in  F            [1,1,1500,512]" in c.stdout and "cross_k" not in c.stdout
    docs = {}
    for name, extra in (("absorbed", ["--model", str(out)]), ("default", []), ("absorbed-tflite",
                        ["--model", str(out), "--backend", "tflite"])):
        t = whisperkv("transcribe", str(AUDIO / "test_en.wav"), "--json", *extra)
        assert t.returncode == 0, t.stderr
        docs[name] = json.loads(t.stdout)
    assert docs["absorbed"]["tokens"] == docs["default"]["tokens"] == docs["absorbed-tflite"]["tokens"]
    assert len(docs["default"]["tokens"]) > 10
