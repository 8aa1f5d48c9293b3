"""The exported bundle: files, manifest, static MTK-form signatures, weights that read back exactly."""
import json

import numpy as np
import onnx
import pytest

from core.errors import ModelError
from core.model.file_hash import sha256_files
from device.graphs.tflite_read import io, operators, tensors
from device.runner.bundle import read_bundle, weights_from_bundle
from device.spec.native_tables import FILES as NATIVE_TABLES
from device.toolchain.check_dla import check
from device.toolchain.export import export_bundle, quantize_bundle
from tests.device.bundle_helpers import exported_bundle

L, D = 6, 512


@pytest.fixture(scope="module")
def bundle():
    return exported_bundle()


def test_bundle_holds_every_file_with_its_sha256(bundle):
    doc = json.loads((bundle / "model.json").read_text())
    assert set(doc["files"]) == {"encoder.onnx", "decoder_step.onnx", "encoder.tflite", "decoder_step.tflite",
                                 "token_embedding.npy", "positional_embedding.npy", "tokenizer.json",
                                 *NATIVE_TABLES}     # what a native runner reads instead (docs/native-tables.md)
    assert {k: (g["file"], g["format"], g["role"]) for k, g in doc["graphs"].items()} == {
        "encoder": ("encoder.onnx", "onnx", "encoder"), "decoder_step": ("decoder_step.onnx", "onnx", "decoder_step"),
        "encoder_tflite": ("encoder.tflite", "tflite", "encoder"),
        "decoder_step_tflite": ("decoder_step.tflite", "tflite", "decoder_step")}
    assert doc["formats"] == ["onnx", "tflite"] and doc["graphs"]["encoder_tflite"]["weights"] == "fp32"
    for name, digest in doc["files"].items():
        assert sha256_files([bundle / name]) == digest
    assert doc["dtype"] == "fp32" and doc["opset"] == 20 and doc["dims"]["n_vocab"] == 51865
    assert doc["special_tokens"]["sot"] == 50258 and doc["special_tokens"]["eot"] == 50257
    assert doc["special_tokens"]["languages"]["zh"] == 50260
    assert np.load(bundle / "token_embedding.npy", mmap_mode="r").shape == (51865, D)
    assert np.load(bundle / "positional_embedding.npy", mmap_mode="r").shape == (448, D)


def _sig(path):
    m = onnx.load(str(path), load_external_data=False)
    dims = lambda vi: [d.dim_value for d in vi.type.tensor_type.shape.dim]  # noqa: E731
    return {vi.name: dims(vi) for vi in m.graph.input}, {vi.name: dims(vi) for vi in m.graph.output}


def _tflite_sig(path):
    d = io(path.read_bytes())
    return d["inputs"], d["outputs"]


def test_graph_signatures_are_design_section_1(bundle):
    encoder = ({"mel": [1, 80, 3000]}, {"cross_k": [L, 1, 1500, D], "cross_v": [L, 1, 1500, D]})
    step = ({"x": [1, 1, D], "self_k": [L, 1, 448, D], "self_v": [L, 1, 448, D], "cross_k": [L, 1, 1500, D],
             "cross_v": [L, 1, 1500, D], "mask": [1, 1, 1, 449]},
            {"logits": [1, 1, 51865], "new_k": [L, 1, 1, D], "new_v": [L, 1, 1, D]})
    assert _sig(bundle / "encoder.onnx") == encoder and _tflite_sig(bundle / "encoder.tflite") == encoder
    assert _sig(bundle / "decoder_step.onnx") == step and _tflite_sig(bundle / "decoder_step.tflite") == step
    doc = json.loads((bundle / "model.json").read_text())
    assert (doc["graphs"]["decoder_step_tflite"]["inputs"], doc["graphs"]["decoder_step_tflite"]["outputs"]) == step


def test_weights_read_back_from_the_bundle_exactly(bundle, model):
    back = weights_from_bundle(bundle).params
    assert set(back) == set(model.weights.params)
    for name, arr in model.weights.params.items():
        assert np.array_equal(back[name], arr), name


def test_edited_bundle_fails_verification_with_a_fix(bundle, tmp_path):
    copy = tmp_path / "b"
    copy.mkdir()
    for f in ("model.json", "tokenizer.json"):
        (copy / f).write_bytes((bundle / f).read_bytes())
    with pytest.raises(ModelError, match="missing .* re-create it"):
        read_bundle(copy)
    with pytest.raises(ModelError, match="no model.json"):
        read_bundle(tmp_path)


def test_fp16_tflite_bundle_stores_fp16_weights_behind_dequantize(bundle, model, tmp_path):
    doc = export_bundle(model.weights, tmp_path / "b16", "fp16", formats=("tflite",))
    assert doc["dtype"] == "fp16" and doc["formats"] == ["tflite"] and doc["opset"] is None
    assert set(doc["graphs"]) == {"encoder_tflite", "decoder_step_tflite"}
    assert set(doc["files"]) == {"encoder.tflite", "decoder_step.tflite", "token_embedding.npy",
                                 "positional_embedding.npy", "tokenizer.json", *NATIVE_TABLES}
    step = (tmp_path / "b16" / "decoder_step.tflite").read_bytes()
    halves = [t for t in tensors(step) if t.dtype == "FLOAT16"]
    assert halves and all(t.const for t in halves)
    assert sum(o.op == "DEQUANTIZE" for o in operators(step)) == len(halves)
    assert {t.name: t.dtype for t in tensors(step) if t.name in ("x", "self_k", "logits")} == dict.fromkeys(
        ("x", "self_k", "logits"), "FLOAT32")                 # the runner feeds and reads float32
    assert len(step) < 0.55 * (bundle / "decoder_step.tflite").stat().st_size
    assert read_bundle(tmp_path / "b16", verify=True).dtype == "fp16"
    assert all(r.ok for r in check(tmp_path / "b16"))        # fp16 constants are MDLA-native


def test_a_format_or_dtype_that_cannot_be_built_names_the_fix(model, tmp_path):
    with pytest.raises(ModelError, match="TFLite graphs are not built in int8.*--dtype fp16"):
        export_bundle(model.weights, tmp_path / "b8", "int8", formats=("tflite",))
    with pytest.raises(ModelError, match="no graph format"):
        export_bundle(model.weights, tmp_path / "b8", "fp32", formats=())
    assert not (tmp_path / "b8").exists()


def test_quantised_onnx_bundle_drops_the_fp32_tflite_graphs(bundle, tmp_path):
    doc = quantize_bundle(bundle, tmp_path / "q", "fp16")
    assert set(doc["graphs"]) == {"encoder", "decoder_step"} and doc["formats"] == ["onnx"]
    assert not list((tmp_path / "q").glob("*.tflite"))
