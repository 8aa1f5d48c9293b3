"""What deploy asks the board's Python and what it concludes: the tags it reads however the board can give them, the
needs it takes from the backends' table, and the one line for a Python too old or a package with no wheel."""
from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from cli.main import main
from device.deploy import board_install
from device.deploy.board_packages import BoardPython, PackageError, missing, needs, probe
from device.deploy.deploy import deploy
from device.deploy.wheels import download_args, fetch, hand_platforms
from device.link.local import LocalTransport
from tests.device.link.board_python import (  # noqa: F401  (the session's board and wheels)
    board_python,
    lab_wheels,
    pc_wheels,
)
from tests.device.toolchain.test_compile import make_bundle


def test_needs_come_from_the_backends_table_with_tflite_runtime_tried_first():
    assert needs("tflite") == [("numpy",), ("tflite_runtime", "ai_edge_litert")]
    assert needs("auto") == needs("dla") == [("numpy",)]
    board = BoardPython((3, 12, 0), [], "x", {"numpy": True, "ai_edge_litert": True}, {}, True, True, [])
    assert missing(board, "tflite") == []                        # either interpreter will do
    assert missing(replace(board, modules={}), "tflite") == [("numpy",), ("tflite_runtime", "ai_edge_litert")]


def test_tags_computed_without_packaging_or_pip_match_packagings(tmp_path):
    """A board whose Python has neither `packaging` nor pip: the probe computes the tags from sysconfig and the C
    library's version, and they select the same platforms and ABIs as packaging.tags does."""
    for name in ("packaging", "pip"):                    # shadow both, as a Python without them
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('not on this board')\n")
    real = probe(LocalTransport(), str(tmp_path / "d"))
    bare_env = LocalTransport()
    bare_env.run = lambda argv, timeout=60.0, cwd=None: LocalTransport.run(
        bare_env, ["env", f"PYTHONPATH={tmp_path}", *argv], timeout, cwd)
    bare = probe(bare_env, str(tmp_path / "d"))
    assert real.tags_from in ("packaging.tags", "pip._vendor.packaging.tags")
    assert bare.tags_from == "sysconfig"
    assert bare.platforms == real.platforms and bare.abis == real.abis


def test_a_board_whose_packaging_lists_linux_first_is_named_by_its_newest_manylinux():
    """packaging 26.3 lists linux_<arch> first; no index hosts such a wheel, so the fix line names manylinux."""
    plats = ["linux_aarch64", "manylinux_2_35_aarch64", "manylinux_2_28_aarch64", "manylinux2014_aarch64"]
    board = BoardPython((3, 11, 2), [f"cp311-cp311-{p}" for p in plats], "packaging.tags", {}, {}, True, True, [])
    assert board.platforms == plats[1:] + plats[:1] and hand_platforms(board) == plats[1:]


def test_an_aarch64_board_gets_wheels_for_its_own_platform_and_python():
    tags = [f"cp312-{abi}-{plat}" for abi in ("cp312", "abi3", "none")
            for plat in ("manylinux_2_35_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64", "linux_aarch64")]
    board = BoardPython((3, 12, 3), tags + ["py3-none-any"], "packaging.tags", {}, {}, True, True, [])
    args = download_args(board)
    assert args[:5] == ["--only-binary=:all:", "--implementation", "cp", "--python-version", "3.12"]
    assert [args[i + 1] for i, a in enumerate(args) if a == "--abi"] == ["cp312", "abi3", "none"]
    assert [args[i + 1] for i, a in enumerate(args) if a == "--platform"] == [
        "manylinux_2_35_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64", "linux_aarch64"]


def _old_board(monkeypatch, **changes):
    real = probe(LocalTransport(), "/nonexistent")
    fake = replace(real, modules={"numpy": True}, **changes)
    monkeypatch.setattr(board_install, "probe", lambda transport, root: fake)
    return fake


def test_a_python_older_than_the_runner_supports_gets_one_line_before_anything_ships(tmp_path, monkeypatch, capsys):
    _old_board(monkeypatch, python=(3, 9, 18))
    bundle = make_bundle(tmp_path / "b")
    with pytest.raises(PackageError, match=r"the board's Python 3\.9 is older than the runner supports \(3\.10\)"):
        deploy(LocalTransport(), dir=str(tmp_path / "board"), model=str(bundle), backend="tflite")
    assert not (tmp_path / "board" / "model").exists()
    assert main(["deploy", "--device", f"local?dir={tmp_path / 'board'}", "--backend", "tflite",
                 "--model", str(bundle)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Python 3.9" in err[0] and "?python=" in err[0]


def test_a_package_with_no_wheel_for_the_board_gets_one_line_naming_it_and_the_fix(
        board_python, lab_wheels, tmp_path, monkeypatch, capsys):  # noqa: F811
    """The lab folder holds tflite-runtime for cp311 on x86-64: not for a riscv64 board, nor for Python 3.12."""
    board = probe(LocalTransport(python=board_python), str(tmp_path))
    riscv = replace(board, tags=[t.replace("x86_64", "riscv64") for t in board.tags])
    for other in (riscv, replace(board, python=(3, 12, 1))):
        with pytest.raises(PackageError) as err:
            fetch(other, [("tflite_runtime", "ai_edge_litert")], tmp_path / "w", lab_wheels)
        newest = next(p for p in other.platforms if p.startswith("manylinux_2_"))
        assert err.value.problem.startswith("no wheel of tflite-runtime or ai-edge-litert for the board's Python "
                                            f"{other.version} on {newest} in {lab_wheels}")
        assert "--wheels DIR" in err.value.fix and f"--platform {newest}" in err.value.fix
    _old_board(monkeypatch, tags=riscv.tags)
    assert main(["deploy", "--device", f"local?dir={tmp_path / 'board'}", "--backend", "tflite", "--model",
                 str(make_bundle(tmp_path / "b")), "--wheels", str(lab_wheels)]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if "error" in ln]
    assert len(err) == 1 and "no wheel of tflite-runtime or ai-edge-litert" in err[0] and "riscv64" in err[0]


def test_a_board_that_has_what_the_backend_needs_gets_nothing_installed(tmp_path):
    said: list[str] = []
    result = deploy(LocalTransport(python=sys.executable), dir=str(tmp_path / "board"),
                    model=str(make_bundle(tmp_path / "b")), backend="tflite", log=said.append)
    assert result["packages"]["installed"] == [] and any("nothing to install" in line for line in said)
