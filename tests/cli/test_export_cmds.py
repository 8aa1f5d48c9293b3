"""`whisperkv export` then `check-dla` as a user runs them, and `transcribe --backend onnx` vs numpy."""
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
    assert "MDLA 5.3 check: PASS" in c.stdout
    j = whisperkv("check-dla", str(out), "--json")
    assert j.returncode == 0 and json.loads(j.stdout)["ok"] is True


def test_export_errors_name_the_fix(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = whisperkv("export", "--out", str(blocker / "b"))
    one_clear_line(r)
    assert "writable --out" in r.stderr
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
