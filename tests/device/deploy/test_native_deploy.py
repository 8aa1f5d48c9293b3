"""Deploy ships the native runner (device/deploy/native_deploy.py) where the board has no Python the runner can use,
or where --runner native asks: DIR/bin/whisperkv-runner beside the compiled bundle's .dla graphs and native tables,
hashed with sha256sum, and a record naming it, which the link then starts unasked."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from core.model.file_hash import sha256_files
from device.deploy import native_deploy
from device.deploy.deploy import DeployError, deploy
from device.deploy.native_deploy import NativeDeployError, deployed_runner, runner_parts
from device.link.connect import open_transport
from device.link.local import LocalTransport
from device.link.transport import CommandResult
from device.spec import native_tables
from device.toolchain import native_runner_build
from tests.device.deploy.test_deploy import _compiled
from tests.device.link.test_runner_choice import PYTHON_ONLY, fake_native, refused_hello
from tests.device.link_helpers import NO_CONFIG, ssh_url

NO_PYTHON = "/nonexistent/python3"      # a board without Python: every use of one would fail


def native_bundle(src: Path, tables: bool = True) -> Path:
    """A compiled bundle (placeholder graphs, the step's attention variant too) with placeholder native tables, listed
    in model.json as export and compile list them."""
    _compiled(src)
    doc = json.loads((src / "model.json").read_text())
    (src / "decoder_step_attention.dla").write_bytes(b"compiled attention variant")
    doc["files"]["decoder_step_attention.dla"] = sha256_files([src / "decoder_step_attention.dla"])
    doc["dla"]["graphs"]["decoder_step_attention"] = {"file": "decoder_step_attention.dla"}
    if tables:
        for name in native_tables.FILES:
            (src / name).write_bytes(b"table " + name.encode())
            doc["files"][name] = sha256_files([src / name])
        doc[native_tables.MANIFEST_KEY] = native_tables.JSON_FILE
    (src / "model.json").write_text(json.dumps(doc))
    return src


@pytest.fixture
def built(tmp_path, monkeypatch) -> list[str]:
    """The native runner's build, a STAND-IN runner: the architectures it was built for."""
    arches = []

    def build(arch):
        arches.append(arch)
        return fake_native(tmp_path / "build" / arch / "whisperkv-runner")

    monkeypatch.setattr(native_runner_build, "build", build)
    return arches


def test_a_board_without_python_gets_the_native_runner_unasked_and_the_link_starts_it(tmp_path, built):
    board = tmp_path / "board"
    result = deploy(LocalTransport(python=NO_PYTHON), dir=str(board), model=str(native_bundle(tmp_path / "b")))
    assert result["runner"] == "native" and result["backend"] == "dla" and built == [os.uname().machine]
    assert sorted(result["uploaded"]) == sorted(["bin/whisperkv-runner", "model/model.json", "model/encoder.dla",
                                                 "model/decoder_step.dla",
                                                 *(f"model/{n}" for n in native_tables.FILES)])
    assert os.access(board / "bin" / "whisperkv-runner", os.X_OK)
    assert not list(board.rglob("*.py")) and not list(board.rglob("*.npy")) and not (board / "model" /
                                                                                      "tokenizer.json").exists()
    assert not (board / "model" / "decoder_step_attention.dla").exists()      # the Python runner's only
    record = json.loads((board / "manifest.json").read_text())
    assert (record["runner"], record["backend"], record["packages"]) == ("native", "dla", {"installed": [],
                                                                                           "into": None})
    shipped = json.loads((board / "model" / "model.json").read_text())
    assert set(shipped["files"]) == {"encoder.dla", "decoder_step.dla", *native_tables.FILES}
    # hashed with sha256sum on the board: a second deploy finds everything in place
    again = deploy(LocalTransport(python=NO_PYTHON), dir=str(board), model=str(tmp_path / "b"))
    assert again["uploaded"] == [] and again["runner"] == "native"
    # the URL does not say: the link starts the runner the record names, which finds the bundle beside its folder
    said = refused_hello(open_transport(f"local?dir={board}"), ["--backend", "dla", *PYTHON_ONLY])
    assert said == {"argv": ["--backend", "dla"], "looked_in": str(board / "model")}


def test_runner_native_ships_it_beside_a_python_the_runner_could_use(tmp_path, built, capsys):
    from cli.main import main

    board = tmp_path / "board"
    assert main(["deploy", "--device", f"local?dir={board}&runner=native", "--model",
                 str(native_bundle(tmp_path / "b"))]) == 0
    assert "deployed the native runner to local:" in capsys.readouterr().out
    assert json.loads((board / "manifest.json").read_text())["runner"] == "native"
    python = deploy(LocalTransport(), dir=str(tmp_path / "py"), model=str(tmp_path / "b"), backend="dla")
    assert python["runner"] == "python" and "bin/whisperkv-runner" not in python["uploaded"]
    assert json.loads((tmp_path / "py" / "manifest.json").read_text())["runner"] == "python"


class Board(LocalTransport):
    """A board whose Python (if any) reports `version`."""

    def __init__(self, version: str | None):
        super().__init__()
        self.version = version

    def run(self, argv, timeout=60.0, cwd=None):
        if argv[:2] == [self.python, "-c"] and self.version:
            return CommandResult(0, f"{self.version}\n".encode(), b"")
        return CommandResult(127, b"", b"python3: not found")


def test_the_runner_a_board_gets_is_the_python_one_only_where_its_python_is_new_enough():
    assert deployed_runner(Board("3.12.11"), None) == "python"
    assert deployed_runner(Board("3.10.0"), None) == "python"
    said = []
    assert deployed_runner(Board("3.8.10"), None, said.append) == "native"
    assert said == [f"local: Python 3.8.10 at {sys.executable} is older than 3.10; the native runner needs none: "
                    "deploying it"]
    assert deployed_runner(Board(None), None) == "native"
    assert deployed_runner(Board(None), "python") == "python" and deployed_runner(Board("3.12.1"), "native") == "native"


def test_the_build_is_the_boards_cpu_and_an_unbuilt_one_is_one_line(built):
    assert [rel for rel, _ in runner_parts("aarch64")] == ["bin/whisperkv-runner"] and built == ["aarch64"]
    runner_parts("x86_64")
    assert built == ["aarch64", "x86_64"]
    with pytest.raises(NativeDeployError, match="built for x86_64 and aarch64 Linux boards and aarch64 Android ones; "
                       "this one is riscv64") as err:
        runner_parts("riscv64")
    assert str(err.value.fix) == "deploy the Python runner: ?runner=python"


def test_the_native_runner_needs_a_compiled_bundle_with_native_tables(tmp_path, built):
    board = str(tmp_path / "board")
    with pytest.raises(NativeDeployError, match="serves a compiled bundle on the Neuron runtime"):
        deploy(LocalTransport(), dir=board, model=str(native_bundle(tmp_path / "b")), backend="tflite",
               runner="native")
    with pytest.raises(NativeDeployError, match="has no native tables") as err:
        deploy(LocalTransport(), dir=board, model=str(native_bundle(tmp_path / "old", tables=False)),
               runner="native")
    assert "export the bundle again" in err.value.fix
    with pytest.raises(DeployError, match="the native runner ships a compiled bundle, and --model names none"):
        deploy(LocalTransport(python=NO_PYTHON), dir=board)          # unasked: a board without Python
    assert not (tmp_path / "board").exists()
    assert native_deploy.ships("encoder.dla") and not native_deploy.ships("tokenizer.json")
    # a shorter window's encoder (`whisperkv export --windows`) is the native runner's too (encode.c); the step's
    # attention variant is not
    assert native_deploy.ships("encoder_10s.dla") and native_deploy.ships("encoder_20s.dla")
    assert not native_deploy.ships("decoder_step_attention.dla") and not native_deploy.ships("encoder_10s.tflite")


def test_device_info_and_the_doctor_say_which_runner_a_board_gets_and_why():
    assert native_deploy.board_runner("/usr/bin/python3", "3.12.11") == (
        "python", "Python 3.12.11 at /usr/bin/python3 can run the Python runner")
    assert native_deploy.board_runner("/usr/bin/python3", "3.8.10") == (
        "native", "Python 3.8.10 at /usr/bin/python3 is older than 3.10; the native runner needs none")
    assert native_deploy.board_runner(None, None) == ("native", "no Python 3.10 or newer here; the native runner "
                                                                "needs none")


def test_over_ssh_a_board_without_python_gets_the_native_runner_and_the_link_starts_it(sshd, tmp_path, built):
    """The real sshd: SFTP drops the file's mode (deploy makes it executable), sha256sum checks the files, and a
    URL without ?runner= starts the runner deploy recorded, in the runner's folder."""
    kh = [str(sshd.write_known_hosts(tmp_path / "kh"))]
    board = tmp_path / "ssh-board"

    def board_link():
        return open_transport(ssh_url(sshd, dir=str(board), python=NO_PYTHON), known_hosts=kh, allow_agent=False,
                              config_path=NO_CONFIG)

    t = board_link()
    try:
        first = deploy(t, model=str(native_bundle(tmp_path / "b")))
        assert first["runner"] == "native" and "bin/whisperkv-runner" in first["uploaded"]
        assert deploy(t, model=str(tmp_path / "b"))["uploaded"] == []
    finally:
        t.close()
    said = refused_hello(board_link(), ["--backend", "dla", *PYTHON_ONLY])
    assert said == {"argv": ["--backend", "dla"], "looked_in": str(board / "model")}
