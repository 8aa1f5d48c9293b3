"""`whisperkv compile DIR` as a user runs it, with the STAND-IN `ncc-tflite` of tests/device/toolchain/test_compile.py
(the real compiler needs MediaTek's NeuroPilot SDK download)."""
import json

import pytest

from cli.main import main
from tests.device.toolchain.test_compile import make_bundle, stand_in_ncc  # noqa: F401  (the stand-in compiler)


def test_compile_writes_dla_and_reports_them(stand_in_ncc, tmp_path, capsys):  # noqa: F811
    b = make_bundle(tmp_path / "b")
    assert main(["compile", str(b)]) == 0
    out, err = capsys.readouterr()
    assert "encoder.dla" in out and "decoder_step.dla" in out and "neuronrt -a FILE.dla -d" in out
    assert "--arch=mdla5.3,edma3.6" in err and "stand-in" in err
    assert main(["compile", str(b), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["soc"] == "mt8371" and [g["file"] for g in doc["graphs"]] == ["decoder_step.dla", "encoder.dla"]


def test_without_the_sdk_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert main(["compile", str(make_bundle(tmp_path / "b"))]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "MediaTek NeuroPilot SDK" in err and "ncc-tflite" in err and "--ncc PATH" in err


def test_a_bundle_without_tflite_one_line_and_exit_2(stand_in_ncc, tmp_path, capsys):  # noqa: F811
    assert main(["compile", str(make_bundle(tmp_path / "b", tflite=False))]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "whisperkv export --format tflite" in err


def test_a_compiler_failure_shows_its_stderr_and_exits_1(stand_in_ncc, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("NCC_STANDIN_FAIL", "1")
    assert main(["compile", str(make_bundle(tmp_path / "b"))]) == 1
    err = capsys.readouterr().err
    assert "ERROR: op GATHER is not supported on mdla5.3" in err and err.strip().splitlines()[-1].startswith(
        "whisperkv: error: ncc-tflite failed on decoder_step.tflite (exit 3)")


def test_unknown_soc_is_refused_by_the_parser(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compile", str(tmp_path), "--soc", "mt9999"])
    assert exc.value.code == 2
    assert "mt8371" in capsys.readouterr().err
