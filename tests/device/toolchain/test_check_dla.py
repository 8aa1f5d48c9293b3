"""check-dla: the exported bundle passes; a graph with a Gather, a rank-5 tensor and a dynamic dim fails."""
import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cli.main import main
from device.toolchain.check_dla import check, check_graph, to_json, to_text
from tests.device.bundle_helpers import exported_bundle


def bad_graph(path):
    """A token-embedding Gather, a rank-5 [6,1,8,448,64] cache and a dynamic sequence length."""
    emb = numpy_helper.from_array(np.zeros((51865, 8), np.float32), "emb")
    shape5 = numpy_helper.from_array(np.array([6, 1, 8, 448, 64], np.int64), "shape5")
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["x"], name="embedding_lookup"),
             helper.make_node("Reshape", ["cache", "shape5"], ["cache5"], name="split_heads"),
             helper.make_node("Trilu", ["scores"], ["causal"], name="causal_mask", upper=0)]
    g = helper.make_graph(nodes, "bad", [
        helper.make_tensor_value_info("ids", TensorProto.INT64, [1, "T"]),
        helper.make_tensor_value_info("cache", TensorProto.FLOAT, [6, 1, 448, 512]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 8, 448, 448])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "T", 8]),
         helper.make_tensor_value_info("cache5", TensorProto.FLOAT, [6, 1, 8, 448, 64]),
         helper.make_tensor_value_info("causal", TensorProto.FLOAT, [1, 8, 448, 448])], [emb, shape5])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_bad_graph_fails_with_every_violation_named(tmp_path, capsys):
    path = bad_graph(tmp_path / "bad.onnx")
    rep = check_graph(path)
    kinds = {(v.kind, v.where) for v in rep.violations}
    assert ("unsupported_op", "embedding_lookup") in kinds and ("unsupported_op", "causal_mask") in kinds
    assert ("rank", "cache5") in kinds
    assert ("dynamic_dim", "ids") in kinds and ("dynamic_dim", "x") in kinds
    assert not rep.ok
    gather = next(v for v in rep.violations if v.where == "embedding_lookup")
    assert "GATHER" in gather.fix and "CPU" in gather.fix

    assert main(["check-dla", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "Gather" in out and "UNSUPPORTED" in out
    assert main(["check-dla", str(path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["graphs"][0]["violations"]


def test_exported_bundle_passes_and_lists_each_lowering(capsys):
    bundle = exported_bundle()
    assert main(["check-dla", str(bundle)]) == 0
    text = capsys.readouterr().out
    assert "MDLA 5.3 check: PASS" in text
    reports = check(bundle)
    assert [r.graph for r in reports] == ["encoder", "decoder_step", "encoder_tflite", "decoder_step_tflite"]
    step = to_json(reports)["graphs"][1]
    lowered = {(o["onnx"], o["mdla"]) for o in step["ops"]}
    for pair in [("MatMul", "FULLY_CONNECTED"), ("MatMul", "BATCH_MATMUL"), ("Softmax", "SOFTMAX"),
                 ("Gelu", "GELU"), ("Concat", "CONCATENATION"), ("ReduceMean", "MEAN")]:
        assert pair in lowered
    assert ("Conv", "CONV_2D") in {(o["onnx"], o["mdla"]) for o in to_json(reports)["graphs"][0]["ops"]}
    sizes = {t["name"]: t["bytes"] for t in step["inputs"]}
    assert sizes["self_k"] == 6 * 448 * 512 * 4 and sizes["cross_k"] == 6 * 1500 * 512 * 4
    assert "[6,1,448,512]" in to_text(reports)


def test_missing_target_is_a_clear_error(tmp_path, capsys):
    assert main(["check-dla", str(tmp_path)]) == 2
    assert "no ONNX or TFLite graphs" in capsys.readouterr().err


def test_int8_dynamic_quantisation_fails_and_fp16_passes(tmp_path):
    from device.graphs.ir import Graph
    from device.graphs.onnx_graphs import to_onnx
    from device.graphs.quantize import quantize_model

    g = Graph("tiny")
    x = g.input("x", [4, 64])
    w = g.const("fc.weight", np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32))
    g.output(g.gelu(g.linear(x, w, g.const("fc.bias", np.zeros(32, np.float32)))), "y")
    for dtype, ok in (("fp32", True), ("fp16", True), ("int8", False)):
        onnx.save(quantize_model(to_onnx(g), dtype), str(tmp_path / f"{dtype}.onnx"))
        rep = check_graph(tmp_path / f"{dtype}.onnx")
        assert rep.ok is ok, (dtype, rep.violations)
    details = {v.detail for v in check_graph(tmp_path / "int8.onnx").violations}
    assert "DynamicQuantizeLinear" in details
