"""check-dla on TFLite: a graph with a GATHER, a rank-5 tensor, a dynamic dim and an int64 activation
fails, naming each; the exported TFLite graphs pass with their op histogram."""
import json

import numpy as np

from cli.main import main
from device.graphs.tflite_writer import TFLiteWriter, schema
from device.toolchain import mdla_ops
from device.toolchain.check_dla import check, check_graph, to_json, to_text
from tests.device.bundle_helpers import exported_bundle
from tests.device.graphs.tflite_helpers import BOARD_OPS


def bad_tflite(path):
    """A token-embedding GATHER on int64 ids of dynamic length, and a rank-5 [6,1,8,448,64] cache."""
    S = schema()
    w = TFLiteWriter("bad")
    emb = w.const("emb", np.zeros((100, 8), np.float32))
    ids = w.tensor("ids", [1, 1], np.int64)
    w.tensors[ids].shapeSignature = np.array([1, -1], np.int32)
    x = w.tensor("x", [1, 1, 8])
    w.tensors[x].shapeSignature = np.array([1, -1, 8], np.int32)
    w.op("GATHER", [emb, ids], [x], S.GatherOptionsT(axis=0))
    cache = w.tensor("cache", [6, 1, 448, 512])
    cache5 = w.tensor("cache5", [6, 1, 8, 448, 64])
    w.op("RESHAPE", [cache, w.ints([6, 1, 8, 448, 64])], [cache5], S.ReshapeOptionsT(newShape=[6, 1, 8, 448, 64]))
    path.write_bytes(w.finish(["ids", "cache"], ["x", "cache5"]))
    return path


def test_bad_tflite_fails_naming_op_and_tensors(tmp_path, capsys):
    path = bad_tflite(tmp_path / "bad.tflite")
    rep = check_graph(path)
    assert rep.format == "tflite" and not rep.ok
    kinds = {(v.kind, v.where) for v in rep.violations}
    assert ("unsupported_op", "x") in kinds and ("rank", "cache5") in kinds
    assert ("dynamic_dim", "ids") in kinds and ("dynamic_dim", "x") in kinds
    assert ("dtype", "ids") in kinds                              # an INT64 activation
    gather = next(v for v in rep.violations if v.kind == "unsupported_op")
    assert gather.detail == "GATHER" and "CPU" in gather.fix
    assert not [v for v in rep.violations if v.where in ("emb", "i32_6_1_8_448_64")]   # constants are fine

    assert main(["check-dla", str(path)]) == 1
    out = capsys.readouterr().out
    assert "== bad (bad.tflite): FAIL" in out and "UNSUPPORTED" in out
    assert "VIOLATION unsupported_op: x: GATHER" in out and "VIOLATION rank: cache5" in out
    assert main(["check-dla", str(tmp_path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["graphs"][0]["graph"] == "bad_tflite"


def test_exported_tflite_graphs_pass_with_their_histogram():
    reports = {r.graph: r for r in check(exported_bundle())}
    enc, step = reports["encoder_tflite"], reports["decoder_step_tflite"]
    assert enc.ok and step.ok and enc.format == step.format == "tflite"
    hist = {o["tflite"]: o["count"] for o in to_json([step])["graphs"][0]["ops"]}
    assert set(hist) <= BOARD_OPS and hist["FULLY_CONNECTED"] == 6 * 8 + 1      # 8 linears a block + LM head
    assert {o["tflite"] for o in enc.ops} >= {"CONV_2D", "GELU", "BATCH_MATMUL", "SOFTMAX", "RSQRT"}
    sizes = {t.name: t.bytes for t in step.inputs}
    assert sizes["self_k"] == 6 * 448 * 512 * 4 and sizes["mask"] == 449 * 4
    assert [t.name for t in step.outputs] == ["logits", "new_k", "new_v"]
    text = to_text([enc, step])
    assert "TFLite op" in text and "CONV_2D" in text and "MDLA 5.3 check: PASS" in text


def test_the_op_table_names_a_source_for_every_entry():
    for table in (mdla_ops.SUPPORTED, mdla_ops.ACTIVATION_TYPES, mdla_ops.CONST_ONLY_TYPES):
        assert set(table.values()) <= set(mdla_ops.SOURCES)
    assert BOARD_OPS <= set(mdla_ops.SUPPORTED)
    assert not set(mdla_ops.UNSUPPORTED) & set(mdla_ops.SUPPORTED)
    assert {"GATHER", "SELECT", "TOPK_V2", "LOG_SOFTMAX", "LESS"} <= set(mdla_ops.UNSUPPORTED)
