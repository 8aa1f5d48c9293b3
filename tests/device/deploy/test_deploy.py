"""Deploy to a local directory, through the stand-in adb and over the real sshd; the deployed runner stands alone."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.board.setting_words import WORDS
from device import protocol as P
from device.deploy.deploy import DeployError, deploy, runner_modules
from device.info.info import device_info
from device.link.local import LocalTransport
from device.runner.serve.agent import ROOT
from tests.device.link_helpers import NO_CONFIG, ssh_url


def test_the_c_step_ships_only_to_a_board_whose_architecture_it_runs_on():
    """The registry says where a backend runs (native-int8b: x86-64); deploy asks the board (uname -m)."""
    import platform

    from device.deploy.deploy import board_arch
    from device.link.local import LocalTransport

    native = {m for m in runner_modules("x86_64") if m.startswith("device/runner/native/")}
    assert {"device/runner/native/native_step.c", "device/runner/native/step.py"} <= native
    arm = set(runner_modules("aarch64"))
    assert not [m for m in arm if m.startswith("device/runner/native/")]
    assert "device/runner/backends.py" in arm and "device/runner/onnx/onnx_backend.py" in arm
    assert board_arch(LocalTransport()) == platform.machine()


def test_runner_modules_are_the_runner_folders_without_host_only_code():
    mods = runner_modules()
    assert {"device/runner/serve/agent.py", "device/protocol.py", "core/decode/decoding.py", "core/model/whisper.py",
            "core/model/tokenizer.py", "core/model/weights.py", "core/__init__.py", "device/__init__.py",
            "device/runner/native/native_step.c", "device/runner/native/native_step.h",
            "device/runner/native/library.py"} <= set(mods)        # the C step is built where the runner runs
    # The host side (transports, client, deploy, build tools, QA, the app) never travels to the board.
    assert not [m for m in mods if m.startswith(("device/link/", "device/doctor/", "device/deploy/", "device/info/",
                                                 "device/toolchain/", "core/qa/", "app/", "cli/"))]
    # The spec travels with the runner (the settings table, the backend rows, the C header a native runner reads),
    # and none of the studio's words with it: those are app/board/setting_words.py's.
    assert {"device/spec/settings.py", "device/spec/backend_rows.py", "device/spec/protocol_codes.py",
            "device/spec/whisperkv_spec.h"} <= set(mods)
    spec_text = "".join((ROOT / m).read_text() for m in mods if m.startswith("device/spec/"))
    words = [w.hint for w in WORDS.values() if len(w.hint) > 12] + [w.tip() for w in WORDS.values() if w.tip]
    assert words and not [said for said in words if said in spec_text]
    # Whatever travels imports librosa, paramiko or Qt only inside functions the runner never calls
    # (test_deployed_runner_stands_alone proves it by running without them).
    for rel in mods:
        top = [line for line in (ROOT / rel).read_text().splitlines() if line.startswith(("import ", "from "))]
        assert not [line for line in top if any(m in line for m in ("librosa", "paramiko", "PySide6", "sounddevice"))]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """One local deploy shared by the tests below: (directory, first result)."""
    target = tmp_path_factory.mktemp("board") / "whisperkv"
    seen = []
    result = deploy(LocalTransport(), dir=str(target), progress=lambda d, t: seen.append((d, t)))
    return target, result, seen


def test_local_deploy_pushes_verifies_and_reports_progress(deployed):
    target, result, seen = deployed
    assert set(result["uploaded"]) == set(runner_modules()) | {"model/model.bin", "model/tokenizer.json"}
    assert not result["skipped"]
    assert seen[0] == (0, result["bytes"]) and seen[-1] == (result["bytes"], result["bytes"])
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["model_sha256"] == result["model_sha256"] and manifest["protocol"] == P.PROTOCOL
    assert (target / "model" / "model.bin").stat().st_size > 100e6


def test_redeploy_skips_unchanged_and_replaces_what_changed(deployed):
    target, first, _ = deployed
    (target / "core" / "model" / "whisper.py").write_text("# damaged on the board\n")
    again = deploy(LocalTransport(), dir=str(target))
    assert again["uploaded"] == ["core/model/whisper.py"]
    assert len(again["skipped"]) == len(first["uploaded"]) - 1


def test_deployed_runner_stands_alone_without_host_libraries(deployed):
    """Run the deployed copy with librosa, paramiko and Qt made unimportable: hello still answers."""
    target, result, _ = deployed
    boot = ("import runpy, sys\n"
            "for m in ('librosa', 'paramiko', 'PySide6', 'soundfile', 'pyqtgraph'): sys.modules[m] = None\n"
            "sys.argv = ['agent']\n"
            "runpy.run_module('device.runner', run_name='__main__')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    frames = P.encode_frame({"op": "hello", "protocol": P.PROTOCOL}) + P.encode_frame({"op": "bye"})
    p = subprocess.run([sys.executable, "-c", boot], cwd=target, env=env, input=frames, capture_output=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    (hello,) = P.FrameParser().feed(p.stdout)
    assert hello.header["model"]["sha256"] == result["model_sha256"]
    assert hello.header["model"]["source"] == f"ctranslate2:{target / 'model'}"


def test_exported_onnx_bundle_deploys_whole_with_its_source_hash(tmp_path):
    src = tmp_path / "bundle"
    src.mkdir()
    (src / "model.json").write_text(json.dumps({"format": "whisperkv-mtk", "model_sha256": "ab" * 32}))
    (src / "encoder.onnx").write_bytes(b"\x08\x07graph")
    (src / "tokenizer.json").write_text("{}")
    result = deploy(LocalTransport(), dir=str(tmp_path / "board"), model=str(src))
    assert {"model/model.json", "model/encoder.onnx", "model/tokenizer.json"} <= set(result["uploaded"])
    assert result["model_sha256"] == "ab" * 32
    info = device_info(LocalTransport(), dir=str(tmp_path / "board"))
    assert info["model"] == "deployed: model/model.json" and info["model_sha256"] == "ab" * 32


def test_deploy_refuses_the_source_tree():
    with pytest.raises(DeployError, match="source tree"):
        deploy(LocalTransport(), dir=str(ROOT))


def test_deploy_through_adb_joins_the_split_model(stand_in_adb, tmp_path):
    from device.link.adb import AdbTransport

    target = tmp_path / "adb-board"
    result = deploy(AdbTransport("STANDIN01", python=sys.executable), dir=str(target))
    assert "model/model.bin" in result["uploaded"]
    assert (target / "manifest.json").is_file() and not list((target / "model").glob("*.part*"))
    pushes = [json.loads(line) for line in stand_in_adb.read_text().splitlines() if '"push"' in line]
    assert len(pushes) >= len(result["uploaded"])


def test_deploy_over_ssh_then_skip(sshd, tmp_path):
    from device.link.connect import open_transport

    kh = [str(sshd.write_known_hosts(tmp_path / "kh"))]
    target = tmp_path / "ssh-board"
    t = open_transport(ssh_url(sshd, dir=str(target)), known_hosts=kh, allow_agent=False, config_path=NO_CONFIG)
    try:
        first = deploy(t)
        assert first["dir"] == str(target) and "model/model.bin" in first["uploaded"]
        assert deploy(t)["uploaded"] == []
    finally:
        t.close()


def test_tflite_deploy_ships_no_onnx_and_a_model_json_listing_what_shipped(tmp_path):
    from core.model.file_hash import sha256_files
    from device.runner.bundle import read_bundle
    from tests.device.toolchain.test_compile import make_bundle

    src = make_bundle(tmp_path / "bundle")             # .tflite, .onnx, .npy, tokenizer.json, model.json
    (src / "encoder.dla").write_bytes(b"compiled")     # as `whisperkv compile` leaves it
    doc = json.loads((src / "model.json").read_text())
    doc["files"]["encoder.dla"] = sha256_files([src / "encoder.dla"])
    (src / "model.json").write_text(json.dumps(doc))
    target = tmp_path / "board"
    result = deploy(LocalTransport(), dir=str(target), model=str(src), backend="tflite")
    shipped = {rel for rel in result["uploaded"] if rel.startswith("model/")}
    assert shipped == {f"model/{n}" for n in ("encoder.tflite", "decoder_step.tflite", "encoder.dla",
                                              "token_embedding.npy", "positional_embedding.npy",
                                              "tokenizer.json", "model.json")}
    assert not list((target / "model").glob("*.onnx")) and result["backend"] == "tflite"
    on_board = json.loads((target / "model" / "model.json").read_text())
    assert set(on_board["files"]) == {rel[len("model/"):] for rel in shipped} - {"model.json"}
    assert on_board["model_sha256"] == result["model_sha256"] == "cd" * 32
    read_bundle(target / "model", verify=True)         # the runner's reader accepts the subset
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["backend"] == "tflite" and "model/encoder.onnx" not in manifest["files"]
    assert deploy(LocalTransport(), dir=str(target), model=str(src), backend="tflite")["uploaded"] == []


def test_tflite_deploy_of_a_bundle_without_tflite_names_the_export(tmp_path):
    from tests.device.toolchain.test_compile import make_bundle

    with pytest.raises(DeployError, match="whisperkv export --format tflite") as err:
        deploy(LocalTransport(), dir=str(tmp_path / "board"), model=str(make_bundle(tmp_path / "b", tflite=False)),
               backend="tflite")
    assert "no .tflite graphs" in str(err.value)
    with pytest.raises(DeployError, match="whisperkv export --format tflite"):
        deploy(LocalTransport(), dir=str(tmp_path / "board"), model=str(tmp_path), backend="tflite")


def test_tflite_deploy_without_a_model_exports_once_into_the_cache(tmp_path, monkeypatch):
    """A STAND-IN export_bundle (it writes a small placeholder bundle): what is tested is how deploy asks
    for the TFLite export, names the cache entry after the model, and reuses it."""
    from core.model.file_hash import sha256_files
    from core.model.weights import find_installed_model
    from device.deploy import deploy as D
    from device.spec import native_tables
    from tests.device.toolchain.test_compile import make_bundle

    calls = []

    def stand_in_export(weights, out, dtype="fp32", formats=("onnx", "tflite")):
        calls.append(formats)
        make_bundle(Path(out))
        (Path(out) / native_tables.JSON_FILE).write_text("{}")     # as every export writes the native tables

    monkeypatch.setattr(D, "export_bundle", stand_in_export)
    monkeypatch.setattr(D, "load_model", lambda path=None: "weights")
    monkeypatch.setenv("WHISPERKV_CACHE", str(tmp_path / "cache" / "whisperkv"))
    first = D.cached_tflite_bundle()
    assert first == tmp_path / "cache" / "whisperkv" / "bundles" / f"{sha256_files(find_installed_model())}-tflite"
    assert D.cached_tflite_bundle() == first and calls == [("tflite",)]
    (first / native_tables.JSON_FILE).unlink()          # an export made before the native tables existed
    assert D.cached_tflite_bundle() == first and calls == [("tflite",), ("tflite",)]
    assert (first / native_tables.JSON_FILE).is_file()
    result = deploy(LocalTransport(), dir=str(tmp_path / "board"), backend="tflite")
    assert "model/encoder.tflite" in result["uploaded"] and not list((tmp_path / "board" / "model").glob("*.onnx"))


def test_tflite_deploy_says_so_when_export_writes_no_tflite(tmp_path, monkeypatch):
    from device.deploy import deploy as D

    monkeypatch.setattr(D, "export_bundle", lambda weights, out, dtype="fp32": None)
    monkeypatch.setenv("WHISPERKV_CACHE", str(tmp_path / "cache" / "whisperkv"))
    with pytest.raises(DeployError, match="writes no TFLite graphs yet"):
        D.cached_tflite_bundle()


def test_tflite_deploy_refuses_a_bundle_missing_a_file_it_lists(tmp_path):
    from tests.device.toolchain.test_compile import make_bundle

    src = make_bundle(tmp_path / "bundle")
    (src / "decoder_step.tflite").unlink()
    with pytest.raises(DeployError, match="missing decoder_step.tflite, which its model.json lists"):
        deploy(LocalTransport(), dir=str(tmp_path / "board"), model=str(src), backend="tflite")


def _compiled(src: Path) -> Path:
    """A small bundle as `whisperkv compile` leaves it: .dla files beside the .tflite, both in model.json."""
    from core.model.file_hash import sha256_files
    from tests.device.toolchain.test_compile import make_bundle

    make_bundle(src)
    doc = json.loads((src / "model.json").read_text())
    doc["graphs"] |= {"encoder_tflite": {"file": "encoder.tflite"}, "decoder_step_tflite": {"file": "decoder_step.tflite"}}
    for role in ("encoder", "decoder_step"):
        (src / f"{role}.dla").write_bytes(b"compiled " + role.encode())
        doc["files"][f"{role}.dla"] = sha256_files([src / f"{role}.dla"])
    doc["dla"] = {"graphs": {role: {"file": f"{role}.dla"} for role in ("encoder", "decoder_step")}}
    (src / "model.json").write_text(json.dumps(doc))
    return src


def test_dla_deploy_ships_only_the_compiled_graphs_tables_tokenizer_and_model_json(tmp_path):
    from device.runner.bundle import read_bundle

    src = _compiled(tmp_path / "bundle")
    target = tmp_path / "board"
    result = deploy(LocalTransport(), dir=str(target), model=str(src), backend="dla")
    shipped = {rel for rel in result["uploaded"] if rel.startswith("model/")}
    assert shipped == {f"model/{n}" for n in ("encoder.dla", "decoder_step.dla", "token_embedding.npy",
                                              "positional_embedding.npy", "tokenizer.json", "model.json")}
    assert not list((target / "model").glob("*.tflite")) and not list((target / "model").glob("*.onnx"))
    on_board = read_bundle(target / "model", verify=True)          # the runner's reader accepts the subset
    assert set(on_board.manifest["files"]) == {rel[len("model/"):] for rel in shipped} - {"model.json"}
    assert on_board.manifest["graphs"] == {}                       # no graph it names is missing on the board
    assert on_board.has("encoder", "dla") and on_board.has("decoder_step", "dla")
    assert not on_board.has("encoder", "tflite") and not on_board.has("encoder", "onnx")
    assert json.loads((target / "manifest.json").read_text())["backend"] == result["backend"] == "dla"
    assert deploy(LocalTransport(), dir=str(target), model=str(src), backend="dla")["uploaded"] == []


def test_dla_deploy_of_a_bundle_without_compiled_graphs_says_to_compile_first(tmp_path):
    from tests.device.toolchain.test_compile import make_bundle

    board = str(tmp_path / "board")
    with pytest.raises(DeployError, match=r"has no compiled \.dla graphs") as err:
        deploy(LocalTransport(), dir=board, model=str(make_bundle(tmp_path / "b")), backend="dla")
    assert "run `whisperkv compile DIR` first" in err.value.fix
    with pytest.raises(DeployError, match="--model names none") as err:
        deploy(LocalTransport(), dir=board, backend="dla")
    assert "whisperkv compile DIR" in err.value.fix
    assert not (tmp_path / "board").exists()        # nothing was copied


def test_the_cli_deploys_a_compiled_bundle_for_the_dla_and_names_its_url(tmp_path, capsys):
    from cli.main import main

    src = _compiled(tmp_path / "bundle")
    assert main(["deploy", "--device", f"local?dir={tmp_path / 'board'}", "--backend", "dla",
                 "--model", str(src)]) == 0
    out = capsys.readouterr().out
    assert "backend=dla" in out and "neuron_lib=PATH" in out and "delegate" not in out
    assert main(["deploy", "--device", f"local?dir={tmp_path / 'b2'}", "--backend", "dla",
                 "--model", str(tmp_path / "nowhere")]) != 0
    err = capsys.readouterr().err
    assert "is not an exported bundle" in err and "whisperkv compile DIR" in err and "Traceback" not in err
