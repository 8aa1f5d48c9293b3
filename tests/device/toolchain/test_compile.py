"""`device/toolchain/compile.py` against a STAND-IN `ncc-tflite`.

The real compiler ships only in MediaTek's NeuroPilot SDK, a download this machine cannot make, so
these tests write a stand-in `ncc-tflite` script onto PATH. The stand-in is not a compiler: it checks
that it was called with the MT8371 flags, an existing input and an output path, then stores the TFLite
graph in the .dla it writes (ncc_standin.py). What is real: the flag table, the command line, the errors,
model.json.
"""
import json
import os
from pathlib import Path

import pytest

from core.model.file_hash import sha256_files
from device.runner.bundle import FORMAT, VERSION, read_bundle
from device.runner.neuron.neuron_slots import CONTRACT
from device.spec.soc import SOCS
from device.toolchain.compile import (
    COMMON_FLAGS,
    RELAX_FLAGS,
    CompileFailed,
    CompilerMissing,
    NoTFLite,
    compile_bundle,
    flags_for,
    precision_flags,
)
from tests.device.link_helpers import install_stand_in
from tests.device.toolchain.ncc_standin import STAND_IN_NCC


@pytest.fixture
def stand_in_ncc(tmp_path, monkeypatch) -> Path:
    """Puts the stand-in `ncc-tflite` first on PATH; returns the log of its argv, one JSON list a line."""
    return install_stand_in(tmp_path, monkeypatch, "ncc-tflite", STAND_IN_NCC, "NCC_STANDIN_LOG")


def make_bundle(root: Path, tflite: bool = True) -> Path:
    """A small bundle as the runner reads it (device/runner/bundle.py): placeholder graphs and tables."""
    root.mkdir(parents=True, exist_ok=True)
    names = {"encoder.onnx": b"onnx-enc", "decoder_step.onnx": b"onnx-dec", "token_embedding.npy": b"npy-tok",
             "positional_embedding.npy": b"npy-pos", "tokenizer.json": b"{}"}
    if tflite:
        names |= {"encoder.tflite": b"TFL3-enc", "decoder_step.tflite": b"TFL3-dec"}
    for name, data in names.items():
        (root / name).write_bytes(data)
    doc = {"format": FORMAT, "version": VERSION, "dtype": "fp32", "dims": {}, "model_sha256": "cd" * 32,
           "source": "test", "graphs": {"encoder": {"file": "encoder.onnx"},
                                        "decoder_step": {"file": "decoder_step.onnx"}},
           "files": {name: sha256_files([root / name]) for name in sorted(names)}}
    (root / "model.json").write_text(json.dumps(doc, indent=1) + "\n")
    return root


def test_the_mt8371_flags_are_the_public_ports():
    assert flags_for("MT8371") == SOCS["MT8371"]["flags"] + RELAX_FLAGS + COMMON_FLAGS
    assert flags_for("mt8371")[:3] == ["--arch=mdla5.3,edma3.6", "--l1-size-kb=256", "--num-mdla=1"]
    assert RELAX_FLAGS == ["--relax-fp32", "--opt-accuracy"]


def test_flags_by_dtype_relax_only_what_computes_in_float():
    assert precision_flags("fp32") == precision_flags("fp16") == RELAX_FLAGS
    for dtype in ("a16w8", "a8w8", "mixed"):
        assert precision_flags(dtype) == []
        assert "--relax-fp32" not in flags_for("mt8371", dtype)
        # an integer graph that still holds float ops needs them relaxed
        assert precision_flags(dtype, float_ops=3) == RELAX_FLAGS


def test_compiles_each_tflite_and_records_it_in_model_json(stand_in_ncc, tmp_path):
    b = make_bundle(tmp_path / "b")
    result = compile_bundle(b)
    assert [g.file for g in result.graphs] == ["decoder_step.dla", "encoder.dla"]
    assert (b / "encoder.dla").read_bytes() == b"STAND-IN DLA of TFL3-enc"
    calls = [json.loads(line) for line in stand_in_ncc.read_text().splitlines()]
    assert calls[0] == ["--version"]
    assert calls[1][:-1] == [str(b / "decoder_step.tflite"), *flags_for("mt8371"), "-o"]
    out = Path(calls[1][-1])       # compiled beside the bundle, moved in once every graph compiled
    assert out.name == "decoder_step.dla" and out.parent.parent == b and not out.parent.exists()
    doc = json.loads((b / "model.json").read_text())
    assert doc["dla"]["version"] == "ncc-tflite stand-in, version 0.0-test"
    assert doc["dla"]["flags"] == flags_for("mt8371") and doc["dla"]["soc"] == "mt8371"
    assert doc["dla"]["contract"] == CONTRACT
    assert doc["dla"]["graphs"]["encoder"] == {"file": "encoder.dla", "from": "encoder.tflite",
                                               "sha256": sha256_files([b / "encoder.dla"]),
                                               "flags": flags_for("mt8371")}
    assert {"--suppress-input", "--suppress-output"} <= set(flags_for("mt8371"))
    assert doc["files"]["decoder_step.dla"] == sha256_files([b / "decoder_step.dla"])
    read_bundle(b, verify=True)           # still a valid bundle, every sha256 matching


def test_a_compiler_with_no_version_is_recorded_as_unknown(stand_in_ncc, tmp_path, monkeypatch):
    monkeypatch.setenv("NCC_STANDIN_NO_VERSION", "1")
    result = compile_bundle(make_bundle(tmp_path / "b"))
    assert result.version == "unknown"


def test_ncc_path_is_used_instead_of_path(stand_in_ncc, tmp_path, monkeypatch):
    exe = stand_in_ncc.parent / "standin-ncc-tflite" / "ncc-tflite"
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    result = compile_bundle(make_bundle(tmp_path / "b"), ncc=exe)
    assert result.compiler == str(exe) and len(result.graphs) == 2


def test_no_sdk_names_it_and_the_ncc_option(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(CompilerMissing) as err:
        compile_bundle(make_bundle(tmp_path / "b"))
    assert "NeuroPilot SDK" in str(err.value) and "ncc-tflite" in str(err.value) and "--ncc PATH" in str(err.value)
    with pytest.raises(CompilerMissing, match="not an executable"):
        compile_bundle(tmp_path / "b", ncc=tmp_path / "nope" / "ncc-tflite")


def test_a_bundle_without_tflite_says_to_export_it(stand_in_ncc, tmp_path):
    with pytest.raises(NoTFLite, match="whisperkv export --format tflite"):
        compile_bundle(make_bundle(tmp_path / "b", tflite=False))
    with pytest.raises(NoTFLite, match="no model.json"):
        compile_bundle(tmp_path)


def test_a_compiler_failure_keeps_its_stderr_and_writes_nothing(stand_in_ncc, tmp_path, monkeypatch):
    b = make_bundle(tmp_path / "b")
    before = (b / "model.json").read_text()
    monkeypatch.setenv("NCC_STANDIN_FAIL", "1")
    with pytest.raises(CompileFailed) as err:
        compile_bundle(b)
    assert "exit 3" in str(err.value) and "GATHER is not supported" in err.value.tail
    assert (b / "model.json").read_text() == before and sorted(p.name for p in b.iterdir()) == sorted(
        p.name for p in make_bundle(tmp_path / "fresh").iterdir())


def test_a_failed_recompile_leaves_the_last_good_one_whole(stand_in_ncc, tmp_path, monkeypatch):
    b = make_bundle(tmp_path / "b")
    compile_bundle(b)
    before = {p.name: p.read_bytes() for p in b.iterdir()}
    monkeypatch.setenv("NCC_STANDIN_FAIL", "1")
    with pytest.raises(CompileFailed):
        compile_bundle(b)
    assert {p.name: p.read_bytes() for p in b.iterdir()} == before
    read_bundle(b, verify=True)


def test_the_sdks_own_libraries_go_on_the_loader_path(tmp_path):
    from device.toolchain.compile import compiler_env

    exe = tmp_path / "neuron_sdk" / "host" / "bin" / "ncc-tflite"
    exe.parent.mkdir(parents=True)
    exe.touch()
    assert "host/lib" not in compiler_env(exe).get("LD_LIBRARY_PATH", "")
    (tmp_path / "neuron_sdk" / "host" / "lib").mkdir()
    assert compiler_env(exe)["LD_LIBRARY_PATH"].split(os.pathsep)[0] == str(tmp_path / "neuron_sdk" / "host" / "lib")
