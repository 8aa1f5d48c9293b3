"""The `deployed` rung (device/doctor/deployment.py) without the PC's bundle: a small compiled bundle (its
`.dla` files are bytes, never loaded) deployed to a folder on this PC, then checked against deploy's record, and
against this PC's runner and, with --model, this PC's bundle. A stale runner file, a changed model file and a
missing file each fail with the `whisperkv deploy` line that fixes it, and that line does."""
from __future__ import annotations

import hashlib
import json
import shlex

import pytest

from cli.main import main
from device.deploy.deploy import deploy
from device.deploy.deploy_record import read_record
from device.doctor.checkup import Checkup
from device.doctor.deployment import backend_of, bundle_soc, deployed, model_doc
from device.link.local import LocalTransport
from device.link.target import parse_target
from tests.device.deploy.test_native_deploy import built, native_bundle  # noqa: F401  (a fixture)


def fake_bundle(folder, encoder: bytes = b"DLA encoder"):
    """A compiled bundle's files as deploy reads them: .dla graphs, a table, tokenizer.json, model.json."""
    folder.mkdir(parents=True)
    files = {"encoder.dla": encoder, "decoder_step.dla": b"DLA step", "token_embedding.npy": b"table",
             "tokenizer.json": b"{}"}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    doc = {"format": "test", "model_sha256": "0" * 64, "dtype": "fp32",
           "files": {n: hashlib.sha256(d).hexdigest() for n, d in files.items()},
           "graphs": {"encoder": {"file": "encoder.dla"}, "decoder_step": {"file": "decoder_step.dla"}},
           "dla": {"soc": "mt8371", "version": "ncc-tflite 8.2.31"}}
    (folder / "model.json").write_text(json.dumps(doc))
    return folder


@pytest.fixture
def board(tmp_path):
    """A board folder deployed with --backend dla from a bundle on this PC; returns (board, bundle)."""
    bundle = fake_bundle(tmp_path / "bundle")
    board = tmp_path / "board"
    deploy(LocalTransport(dir=str(board)), backend="dla", model=bundle)
    return board, bundle


def checkup(board, bundle=None) -> Checkup:
    c = Checkup(parse_target(f"local?dir={board}"), bundle)
    c.transport = LocalTransport(dir=str(board))
    return c


def fix_line(fix: str) -> list[str]:
    """The command between the fix's backquotes, as the CLI's arguments."""
    return shlex.split(fix.split("`")[1])[1:]


def test_deploy_records_every_file_and_the_bundles_model_json(board):
    folder, bundle = board
    record = read_record(LocalTransport(dir=str(folder)), str(folder))
    assert record.backend == "dla" and record.model_source == str(bundle.resolve())
    assert record.model_json["dla"]["soc"] == "mt8371" and "model/encoder.dla" in record.files
    assert "device/protocol.py" in record.files and "model/model.json" in record.files


def test_without_the_bundle_the_board_passes_against_deploys_record(board):
    folder, _ = board
    c = checkup(folder)
    v = deployed(c)
    assert v.status == "pass", v.decided_by
    assert v.figures["mode"] == "dla" and v.figures["against"] == "manifest.json" and "recorded" in v.decided_by
    # what needs the bundle reads the board's model.json: the SoC, and so the backend checked
    assert bundle_soc(model_doc(c)) == "mt8371" and backend_of(c) == "dla" and model_doc(c)["dtype"] == "fp32"


def test_a_changed_model_file_fails_and_the_fix_deploys_it_again(board, capsys):
    folder, bundle = board
    with open(folder / "model" / "encoder.dla", "ab") as f:
        f.write(b"\0")
    v = deployed(checkup(folder))
    assert v.status == "fail" and v.figures["changed"] == ["model/encoder.dla"]
    assert "changed since deploy: model/encoder.dla" in v.decided_by
    args = fix_line(v.fix)
    assert args[:1] == ["deploy"] and f"--model {bundle.resolve()}" in v.fix and "--backend dla" in v.fix
    assert main(args) == 0
    assert deployed(checkup(folder)).status == "pass"


def test_a_stale_runner_file_fails_and_names_it(board):
    folder, _ = board
    (folder / "device" / "protocol.py").write_text("# an older runner\n")
    v = deployed(checkup(folder))
    assert v.status == "fail" and v.figures["stale_runner"] == ["device/protocol.py"]
    assert "the runner differs from this PC's: device/protocol.py" in v.decided_by and "whisperkv deploy" in v.fix


def test_a_missing_file_fails_and_names_it(board):
    folder, _ = board
    (folder / "model" / "token_embedding.npy").unlink()
    v = deployed(checkup(folder))
    assert v.status == "fail" and v.figures["missing"] == ["model/token_embedding.npy"]
    assert "missing: model/token_embedding.npy" in v.decided_by


def test_with_model_the_board_is_also_held_to_this_pcs_bundle(board, tmp_path):
    folder, bundle = board
    assert deployed(checkup(folder, bundle)).status == "pass"
    other = fake_bundle(tmp_path / "other", encoder=b"DLA encoder, compiled again")
    v = deployed(checkup(folder, other))
    assert v.status == "fail" and v.figures["not_this_pcs_bundle"] == ["model/encoder.dla", "model/model.json"]
    assert "not --model's: model/encoder.dla, model/model.json" in v.decided_by and f"--model {other}" in v.fix


def test_nothing_deployed_fails_with_the_deploy_line(tmp_path):
    v = deployed(checkup(tmp_path / "empty"))
    assert v.status == "fail" and "no manifest.json" in v.decided_by and "whisperkv deploy" in v.fix


def test_a_native_deploy_is_held_to_the_native_runner_this_pc_builds(tmp_path, built, capsys):  # noqa: F811
    board = tmp_path / "board"
    deploy(LocalTransport(dir=str(board)), model=str(native_bundle(tmp_path / "b")), runner="native")
    v = deployed(checkup(board))
    assert v.status == "pass" and v.figures["files"] == 8, v.decided_by      # the runner, 7 files of the bundle
    (board / "bin" / "whisperkv-runner").write_text("#!/bin/sh\nexit 3\n")
    v = deployed(checkup(board))
    assert v.status == "fail" and v.figures["stale_runner"] == ["bin/whisperkv-runner"]
    assert fix_line(v.fix)[-2:] == ["--runner", "native"]
    assert main(fix_line(v.fix)) == 0 and deployed(checkup(board)).status == "pass"
