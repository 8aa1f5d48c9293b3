"""device-info on this PC (the "local" device) and through the stand-in adb.

This PC has no NPU: no /dev/apusys*, no neuronrt, no Neuron delegate; ai_edge_litert is installed.
The NPU tools' tests put STAND-IN `neuronrt` and `ncc-tflite` scripts (they only print a version) and a
stand-in delegate file (an empty file) where the probe looks: MediaTek's real ones need a board and its SDK.
"""
import json
import os
import platform
import shutil
import sys

import pytest

from device.info.info import FIELDS, device_info, format_info, tflite_used
from device.link.adb import AdbTransport
from device.link.local import LocalTransport
from tests.device.link_helpers import stand_in_android

STAND_IN_TOOL = """#!/bin/sh
# STAND-IN for MediaTek's {name} (test only): prints what the real one prints for its version.
echo "INFO: stand-in {name}"
echo "Version: 0.0-standin"
"""


@pytest.fixture
def stand_in_npu(tmp_path, monkeypatch):
    """Stand-in neuronrt and ncc-tflite first on PATH, and a stand-in delegate file; returns its glob."""
    bindir = tmp_path / "npu-bin"
    bindir.mkdir()
    for name in ("neuronrt", "ncc-tflite"):
        (bindir / name).write_text(STAND_IN_TOOL.format(name=name))
        (bindir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    libdir = tmp_path / "vendor-lib64"
    libdir.mkdir()
    (libdir / "libneuron_stable_delegate.so").write_bytes(b"")
    return (str(libdir / "libneuron*delegate*.so*"),)


def test_local_device_info_reports_every_field():
    info = device_info(LocalTransport())
    assert list(info) == list(FIELDS)
    assert info["device"] == "local" and info["python"] == platform.python_version()
    assert info["board_runner"] == f"python: Python {platform.python_version()} at {sys.executable} can run the Python runner"
    assert info["numpy"] and info["mem_total_mb"] > 0 and info["runner_version"]
    assert info["model"]                      # the installed wheels
    assert info["compiler"] == shutil.which("cc")          # this PC builds the native-int8b step with it
    text = format_info(info)
    assert "python" in text and ("absent" in text) == (None in info.values() or not info["npu"])


def test_a_board_with_no_compiler_on_its_path_says_so(tmp_path, monkeypatch):
    for tool in ("sh", "uname", "cat", "tr", "ls"):        # as on the Genio 520 image: a shell, no cc, gcc or clang
        (tmp_path / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(tmp_path))
    info = device_info(LocalTransport())
    assert info["compiler"] is None and info["python"]
    assert dict(line.split(None, 1) for line in format_info(info).splitlines())["compiler"] == "absent"


def test_this_pc_is_not_npu_ready_and_says_what_is_missing():
    info = device_info(LocalTransport())
    assert info["npu"] == [] and info["neuronrt"] is None and info["neuron_delegates"] == []
    assert info["tflite"]["ai_edge_litert"]             # installed here: its version
    assert info["npu_ready"].startswith("no: missing /dev/apusys*") and "neuronrt" in info["npu_ready"]
    lines = dict(line.split(None, 1) for line in format_info(info).splitlines())
    assert lines["neuronrt"] == "not found" and lines["neuron_delegates"] == "not found"
    assert f"ai_edge_litert {info['tflite']['ai_edge_litert']}" in lines["tflite"]


def test_the_interpreter_the_tflite_backend_takes_is_named():
    """The image's tflite_runtime before ai_edge_litert, as the backend tries them; one that fails to import
    is not taken."""
    both = {"tflite": {"tflite_runtime": "2.16.1", "ai_edge_litert": "2.3.0"}}
    assert tflite_used(both) == "tflite_runtime"
    assert tflite_used({"tflite": {"tflite_runtime": "import failed: ImportError: numpy", "ai_edge_litert": "2.3.0"}}) \
        == "ai_edge_litert"
    assert tflite_used({"tflite": None}) is None
    info = device_info(LocalTransport())
    assert info["tflite_used"] == ("tflite_runtime" if info["tflite"]["tflite_runtime"] else "ai_edge_litert")


def test_npu_tools_and_delegate_are_found_with_their_versions(stand_in_npu):
    info = device_info(LocalTransport(), delegate_globs=stand_in_npu)
    assert info["neuronrt"]["path"].endswith("npu-bin/neuronrt")
    assert info["neuronrt"]["version"] == info["ncc_tflite"]["version"] == "Version: 0.0-standin"
    assert [os.path.basename(p) for p in info["neuron_delegates"]] == ["libneuron_stable_delegate.so"]
    # Still no /dev/apusys* on this PC, so not ready, and the report says only that is missing.
    assert info["npu_ready"] == "no: missing /dev/apusys*"
    lines = dict(line.split(None, 1) for line in format_info(info).splitlines())
    assert lines["ncc_tflite"].endswith("npu-bin/ncc-tflite (Version: 0.0-standin)")


def test_device_info_names_the_neuron_runtime_library_its_version_and_the_api_the_runner_would_use(tmp_path):
    """On a STAND-IN runtime library exporting both APIs, named as a Genio IoT Yocto image names it."""
    import subprocess

    from tests.conftest import ROOT
    from tests.device.bundle_helpers import standin_library

    lib = str(standin_library("v1+v2"))
    info = device_info(LocalTransport(), neuron_libraries=(str(tmp_path / "missing.so"), lib))
    assert info["neuron_runtime"] == {"path": lib, "version": "0.0.1", "apis": ["V1", "V2"], "api": "V1"}
    r = subprocess.run([sys.executable, "-m", "cli", "device-info", "--device", f"local?neuron_lib={lib}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(None, 1) for line in r.stdout.splitlines())
    assert lines["neuron_runtime"] == f"{lib} (version 0.0.1; exports V1, V2; the dla backend uses V1)"
    assert device_info(LocalTransport(), neuron_libraries=(str(tmp_path / "missing.so"),))["neuron_runtime"] is None


def test_the_shell_probe_finds_npu_tools_without_python(stand_in_adb, stand_in_npu, tmp_path):
    info = device_info(AdbTransport("STANDIN01", python="/nonexistent/python3"), dir=str(tmp_path),
                       delegate_globs=stand_in_npu)
    assert info["python"] is None and info["tflite"] is None
    assert info["neuronrt"]["version"] == "Version: 0.0-standin" and info["ncc_tflite"]["path"].endswith("ncc-tflite")
    assert [os.path.basename(p) for p in info["neuron_delegates"]] == ["libneuron_stable_delegate.so"]


def test_device_without_python_still_reports_and_says_absent(stand_in_adb, tmp_path):
    info = device_info(AdbTransport("STANDIN01", python="/nonexistent/python3"), dir=str(tmp_path))
    assert info["python"] is None and info["os"] and info["mem_total_mb"] > 0
    assert info["npu"] == [] and info["runner_version"] is None
    assert info["neuronrt"] is None and info["neuron_delegates"] == [] and info["tflite"] is None
    lines = dict(line.split(None, 1) for line in format_info(info).splitlines())
    assert lines["python"] == "absent: the Python runner needs Python 3.10 or newer here (install python3, or name " \
        "it with ?python=PATH); `whisperkv deploy` ships the native runner instead"
    assert lines["board_runner"] == "native: no Python 3.10 or newer here; the native runner needs none"
    assert info["abi"] == f"{platform.machine()}, glibc {os.confstr('CS_GNU_LIBC_VERSION').split()[1]}"
    assert lines["npu"] == "absent" and lines["model"] == "absent"
    assert lines["neuronrt"] == "not found" and lines["tflite"] == "absent" and lines["tflite_used"] == "absent"


def test_undeployed_directory_reports_runner_and_model_absent(stand_in_adb, tmp_path):
    info = device_info(AdbTransport("STANDIN01", python=sys.executable), dir=str(tmp_path / "empty"))
    assert info["python"] == platform.python_version() and info["tflite"]["ai_edge_litert"]
    assert info["runner_version"] is None and info["model_sha256"] is None


def test_an_android_device_is_named_by_its_properties_and_gets_the_native_runner(stand_in_adb, tmp_path, monkeypatch):
    """Android answers getprop (a STAND-IN's: release 14, platform mt8189, ABI arm64-v8a) and has no python3:
    device-info names it "Android 14 on MT8189", its ABI bionic's, and the runner it gets the native one."""
    stand_in_android(tmp_path, monkeypatch)
    info = device_info(AdbTransport("STANDIN01", python="/nonexistent/python3"), dir=str(tmp_path))
    assert info["os"] == "Android 14 on MT8189" and info["python"] is None
    assert info["abi"] == f"{platform.machine()}, bionic (arm64-v8a)"
    # named with no Python: the shell asked getprop for the SoC (MT8189, a family the SoC table does not list)
    assert info["soc"]["name"] == "MT8189" and info["soc"]["read_from"] == "getprop ro.board.platform"
    lines = dict(line.split(None, 1) for line in format_info(info).splitlines())
    assert lines["python"] == ("absent: Android has no Python the runner can use; `whisperkv deploy` ships the native "
                               "runner, built for Android (bionic)")
    assert lines["board_runner"] == "native: Android 14 has no Python the runner can use; the native runner needs none"
    assert lines["soc"].startswith("MT8189") and "getprop ro.board.platform" in lines["soc"]
    # what deploy left there, read from its record with `cat` (no Python to ask)
    (tmp_path / "manifest.json").write_text(json.dumps({
        "runner_version": "0.1.0", "runner": "native", "android": "14", "model_sha256": "ab" * 32,
        "files": {"bin/whisperkv-runner": "00", "model/model.json": "11", "model/encoder.dla": "22"}}))
    info = device_info(AdbTransport("STANDIN01", python="/nonexistent/python3"), dir=str(tmp_path))
    assert (info["runner_dir"], info["runner_version"]) == (str(tmp_path), "0.1.0 (native runner)")
    assert (info["model"], info["model_sha256"]) == ("deployed: model/model.json", "ab" * 32)


def test_a_linux_board_without_python_is_named_from_its_shell(stand_in_adb, tmp_path, monkeypatch):
    """The SoC, cores and memory come from the shell (device/info/shell_probe.py), not the board's Python."""
    from tests.cli.doctor_helpers import claim_soc

    monkeypatch.setenv("WHISPERKV_SOC_ROOT", str(claim_soc(tmp_path / "board", "MT8371")))
    info = device_info(AdbTransport("STANDIN01", python="/nonexistent/python3"), dir=str(tmp_path))
    assert info["python"] is None and info["soc"]["name"] == "MT8371" and info["soc"]["npu"] == "MDLA 5.3"
    assert info["cpu"] and info["cpu_count"] == os.cpu_count() and info["kernel"] == platform.release()

