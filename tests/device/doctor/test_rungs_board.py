"""The board rungs (device/doctor/rungs_board.py) on this PC's own shell and Python: a board is named before its
Python is asked for, and what no public record confirms for a Genio 520 warns instead of stopping the ladder."""
from __future__ import annotations

import json
import os
import platform
import shutil
import sys

import pytest

from device.deploy.native_deploy import NativeDeployError
from device.doctor import rungs_board
from device.doctor.checkup import Checkup
from device.doctor.rungs_board import deploy_mode, identity, runtime
from device.link.local import LocalTransport
from device.link.target import parse_target
from device.spec.soc import describe
from tests.cli.doctor_helpers import claim_soc
from tests.device.link_helpers import ANDROID_PROPS, stand_in_android


def checkup(tmp_path, url: str = "local", python: str | None = None, bundle=None) -> Checkup:
    c = Checkup(parse_target(url), bundle)
    c.transport = LocalTransport(python=python, dir=str(tmp_path / "runner"))
    return c


def test_a_board_without_python_is_named_by_its_shell_and_told_what_the_runner_needs(tmp_path, monkeypatch):
    monkeypatch.setenv("WHISPERKV_SOC_ROOT", str(claim_soc(tmp_path / "board", "MT8371")))
    v = identity(checkup(tmp_path, python="/nonexistent/python3"))
    assert v.status == "fail" and v.figures["soc"] == "MT8371" and v.figures["npu"] == "MDLA 5.3"
    assert v.figures["mem_total_mb"] > 0 and v.figures["cores"] and v.figures["python"] is None
    assert "MT8371" in v.decided_by and "/nonexistent/python3" in v.decided_by
    assert "Python 3.10 or newer" in v.fix and "?python=" in v.fix
    assert v.figures["board_runner"] == "native" and v.figures["board_runner_why"].startswith("no Python 3.10 or newer here")
    assert v.figures["abi"] == f"{platform.machine()}, {os.confstr('CS_GNU_LIBC_VERSION')}"
    assert "gets the native runner from `whisperkv deploy --model BUNDLE`" in v.fix


def test_a_board_without_python_where_deploy_left_the_native_runner_passes_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("WHISPERKV_SOC_ROOT", str(claim_soc(tmp_path / "board", "MT8371")))
    (tmp_path / "runner").mkdir()
    (tmp_path / "runner" / "manifest.json").write_text(json.dumps({"runner": "native", "backend": "dla"}))
    v = identity(checkup(tmp_path, python="/nonexistent/python3"))
    assert v.status == "pass" and v.figures["runner"] == "native" and v.figures["python"] is None
    assert v.decided_by.endswith("no Python 3.10 or newer here; the native runner needs none")


def test_a_board_with_python_says_it_and_the_runner_it_gets(tmp_path):
    v = identity(checkup(tmp_path, python=sys.executable))
    assert (v.figures["python"], v.figures["python_at"]) == (platform.python_version(), sys.executable)
    assert v.figures["board_runner"] == "python" and v.figures["abi"].startswith(platform.machine() + ", glibc ")


def test_an_android_board_is_named_by_its_properties_and_told_to_take_the_native_runner(tmp_path, monkeypatch):
    stand_in_android(tmp_path, monkeypatch, {**ANDROID_PROPS, "ro.board.platform": "mt6989"})
    v = identity(checkup(tmp_path, python="/nonexistent/python3"))     # nothing deployed: the link starts python
    assert v.status == "fail" and v.figures["os"] == "Android 14 on MT6989" and v.figures["board_platform"] == "mt6989"
    assert v.figures["cpu_abi"] == "arm64-v8a"
    assert v.figures["board_runner"] == "native" and v.figures["runner"] == "python"
    assert v.figures["abi"] == f"{platform.machine()}, bionic (arm64-v8a)"
    assert "MT6989 (getprop ro.board.platform)" in v.decided_by
    assert "has no Python for the Python runner" in v.decided_by
    assert "deploy the native runner" in v.fix and "?runner=native" in v.fix
    native = identity(checkup(tmp_path, "local?runner=native", python="/nonexistent/python3"))
    assert native.status != "fail" and native.figures["runner"] == "native"
    assert native.decided_by == (f"Android 14 on MT6989, {platform.machine()}, bionic (arm64-v8a); Android 14 has no "
                                 "Python the runner can use; the native runner needs none")


def test_the_native_runner_s_runtime_is_its_library_file_and_dla(tmp_path, monkeypatch):
    stand_in_android(tmp_path, monkeypatch)
    lib = tmp_path / "libneuron_runtime.8.so"
    lib.write_bytes(b"a library file")
    c = checkup(tmp_path, f"local?runner=native&neuron_lib={lib}", python="/nonexistent/python3")
    identity(c)
    v = runtime(c)
    assert v.status == "warn" and v.figures["library"] == str(lib) and v.figures["runner"] == "native"
    assert v.decided_by.startswith(f"{lib}, for the native runner to open") and "apusys" in v.notes[0]
    c = checkup(tmp_path, f"local?runner=native&neuron_lib={tmp_path / 'missing.so'}", python="/nonexistent/python3")
    identity(c)
    assert "no Neuron runtime library at " in runtime(c).notes[0] and "loads rung decides" in runtime(c).notes[0]
    c = checkup(tmp_path, "local?runner=native&backend=tflite", python="/nonexistent/python3")
    identity(c)
    with pytest.raises(NativeDeployError, match="the native runner serves a compiled bundle"):
        runtime(c)


def test_an_soc_the_table_lacks_warns_on_a_board_and_leaves_the_loads_rung_to_decide(tmp_path, monkeypatch):
    said = {"runner_kind": "board", "python": "3.12.11", "soc": describe("MT6989", "/proc/device-tree/compatible"),
            "os": "Poky (Yocto Project Reference Distro) 5.0", "arch": "aarch64", "cores": []}
    monkeypatch.setattr(rungs_board, "probe_board", lambda transport, lib: dict(said))
    c = checkup(tmp_path, python=sys.executable)
    v = identity(c)
    assert c.kind == "board" and v.status == "warn" and not v.fix
    assert "MT6989" in v.notes[0] and "loads rung decides" in v.notes[0] and "expected" not in v.notes[0]


def dla_board(c: Checkup) -> Checkup:
    """What identity would have found on a real board (not an emulation) whose runtime is MediaTek's, with no
    /dev/apusys*: the probe's record, as board_probe.py reports it."""
    lib = shutil.which("sh")        # any file: the rung reads what the probe said of it
    c.board = {"runner_kind": "board", "apusys": [], "soc": {"name": "MT8371", "npu": "MDLA 5.3"},
               "neuron_runtime": {"path": lib, "version": "8.2.16", "apis": ["V1"], "api": "V1", "kind": "real"}}
    return c


def test_no_apusys_and_a_compiler_a_major_version_apart_warn_with_their_sources_on_a_board(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "model.json").write_text(json.dumps({"dla": {"soc": "mt8371", "version": "ncc-tflite 7.0.1"}}))
    c = dla_board(checkup(tmp_path, "local?backend=dla", python=sys.executable, bundle=bundle))
    assert c.kind == "board"
    v = runtime(c)
    assert v.status == "warn" and not v.fix, v.decided_by
    apusys, version = v.notes
    assert "/dev/apusys*" in apusys and "bbudaedu/talkybuddy" in apusys and "loads rung decides" in apusys
    assert "7.x" in version and "8.2.16" in version and "hhlqwq/mtk_models" in version
    assert "loads rung decides" in version and "STAND-IN" not in version


@pytest.mark.parametrize("library, said", [(None, "no Neuron runtime library"),
                                           ({"path": "/x.so", "error": "bad ELF"}, "does not load")])
def test_a_runtime_that_cannot_load_still_stops_the_ladder(tmp_path, library, said):
    c = dla_board(checkup(tmp_path, "local?backend=dla", python=sys.executable))
    c.board["neuron_runtime"] = library
    v = runtime(c)
    assert v.status == "fail" and said in v.decided_by


def test_each_backend_names_the_deploy_mode_that_ships_what_it_reads():
    assert deploy_mode("dla") == "dla" and deploy_mode("tflite") == "tflite" and deploy_mode("auto") == "auto"
