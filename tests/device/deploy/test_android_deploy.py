"""Deploy to an Android board (issue 54) through the STAND-IN adb and a STAND-IN getprop and `uname -m`
(tests/device/link_helpers.py; no Android device exists here): the native runner's bionic build
(`aarch64-android`, a STAND-IN monkeypatched in for the build) ships with the compiled bundle, unasked, to
/data/local/tmp/whisperkv unless the URL names a folder; the record says Android, and the link starts the runner it
names with the vendor library path."""
from __future__ import annotations

import json

import pytest

import device.link.android
from cli.main import main
from device.deploy.deploy import DeployError, deploy
from device.deploy.native_deploy import NativeDeployError
from device.link.adb import AdbTransport
from device.link.connect import open_transport
from device.link.runner_choice import NATIVE_EXE
from tests.device.deploy.test_native_deploy import built, native_bundle  # noqa: F401  (built: a fixture)
from tests.device.link.test_adb import calls
from tests.device.link.test_runner_choice import PYTHON_ONLY, refused_hello
from tests.device.link_helpers import stand_in_android


def test_an_android_board_gets_the_bionic_runner_unasked_and_the_link_starts_it(stand_in_adb, tmp_path, monkeypatch,
                                                                                  built):  # noqa: F811
    stand_in_android(tmp_path, monkeypatch, arm64=True)
    board = tmp_path / "board"
    result = deploy(AdbTransport("STANDIN01"), dir=str(board), model=str(native_bundle(tmp_path / "b")))
    assert (result["runner"], result["backend"], result["android"]) == ("native", "dla", "14")
    assert built == ["aarch64-android"] and (board / NATIVE_EXE).is_file() and not list(board.rglob("*.py"))
    record = json.loads((board / "manifest.json").read_text())
    assert (record["runner"], record["android"]) == ("native", "14")
    said = refused_hello(open_transport(f"adb://STANDIN01?dir={board}"), ["--backend", "dla", *PYTHON_ONLY])
    assert said == {"argv": ["--backend", "dla"], "looked_in": str(board / "model")}
    start = [c[-1] for c in calls(stand_in_adb) if c[-1].endswith(f"{NATIVE_EXE} --backend dla")]
    assert start == [f"cd {board} && exec env LD_LIBRARY_PATH={device.link.android.LIBRARY_PATH} {NATIVE_EXE} "
                     "--backend dla"]


def test_without_a_folder_it_goes_to_android_s_runner_folder_and_the_cli_says_android(stand_in_adb, tmp_path,
                                                                                      monkeypatch, capsys,
                                                                                      built):  # noqa: F811
    stand_in_android(tmp_path, monkeypatch, arm64=True)
    where = tmp_path / "data-local-tmp" / "whisperkv"       # /data/local/tmp/whisperkv, which this PC lacks
    monkeypatch.setattr(device.link.android, "RUNNER_DIR", str(where))
    assert main(["deploy", "--device", "adb://STANDIN01", "--backend", "dla", "--model",
                 str(native_bundle(tmp_path / "b"))]) == 0
    out = capsys.readouterr().out
    assert f"deployed the native runner to adb://STANDIN01:{where} (Android 14) — " in out
    assert (where / NATIVE_EXE).is_file() and json.loads((where / "manifest.json").read_text())["android"] == "14"


def test_an_android_board_of_another_cpu_or_without_a_bundle_is_one_line(stand_in_adb, tmp_path, monkeypatch,
                                                                          built):  # noqa: F811
    stand_in_android(tmp_path, monkeypatch)           # uname -m: this PC's x86_64
    with pytest.raises(NativeDeployError, match="aarch64 Android ones; this Android one is x86_64") as err:
        deploy(AdbTransport("STANDIN01"), dir=str(tmp_path / "x"), model=str(native_bundle(tmp_path / "b")))
    assert "arm64 Android board" in str(err.value.fix)
    stand_in_android(tmp_path, monkeypatch, arm64=True)
    with pytest.raises(DeployError, match="the native runner ships a compiled bundle, and --model names none"):
        deploy(AdbTransport("STANDIN01"), dir=str(tmp_path / "y"))
    assert built == ["aarch64-android"]       # the build comes first: the bundle is named missing after it
