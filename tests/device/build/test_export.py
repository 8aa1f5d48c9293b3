"""The exported bundle: files, manifest, static MTK-form signatures, weights that read back exactly."""
import json

import numpy as np
import onnx
import pytest

from core.errors import ModelError
from device.runner.bundle import read_bundle, sha256_file, weights_from_bundle

from tests.device.bundle_helpers import exported_bundle

L, D = 6, 512


@pytest.fixture(scope="module")
def bundle():
    return exported_bundle()


def test_bundle_holds_every_file_with_its_sha256(bundle):
    doc = json.loads((bundle / "model.json").read_text())
    assert set(doc["files"]) == {"encoder.onnx", "decoder_step.onnx", "token_embedding.npy",
                                 "positional_embedding.npy", "tokenizer.json"}
    for name, digest in doc["files"].items():
        assert sha256_file(bundle / name) == digest
    assert doc["dtype"] == "fp32" and doc["opset"] == 20 and doc["dims"]["n_vocab"] == 51865
    assert doc["special_tokens"]["sot"] == 50258 and doc["special_tokens"]["eot"] == 50257
    assert doc["special_tokens"]["languages"]["zh"] == 50260
    assert np.load(bundle / "token_embedding.npy", mmap_mode="r").shape == (51865, D)
    assert np.load(bundle / "positional_embedding.npy", mmap_mode="r").shape == (448, D)


def _sig(path):
    m = onnx.load(str(path), load_external_data=False)
    dims = lambda vi: [d.dim_value for d in vi.type.tensor_type.shape.dim]  # noqa: E731
    return {vi.name: dims(vi) for vi in m.graph.input}, {vi.name: dims(vi) for vi in m.graph.output}


def test_graph_signatures_are_design_section_1(bundle):
    assert _sig(bundle / "encoder.onnx") == ({"mel": [1, 80, 3000]},
                                             {"cross_k": [L, 1, 1500, D], "cross_v": [L, 1, 1500, D]})
    assert _sig(bundle / "decoder_step.onnx") == (
        {"x": [1, 1, D], "self_k": [L, 1, 448, D], "self_v": [L, 1, 448, D], "cross_k": [L, 1, 1500, D],
         "cross_v": [L, 1, 1500, D], "mask": [1, 1, 1, 449]},
        {"logits": [1, 1, 51865], "new_k": [L, 1, 1, D], "new_v": [L, 1, 1, D]})


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
