"""Issue 54's done-when on the STAND-IN Android board (board.py; no Android device exists here): `whisperkv deploy
--device adb://SERIAL` ships the native runner built for bionic to /data/local/tmp/whisperkv; transcribe, qa, the
doctor and the studio reach it over the STAND-IN adb, and it decodes on the STAND-IN Neuron runtime at
/vendor/lib64/mt8189 (its bionic WIRE build, computing on the PC's STAND-IN APU) with the Python `dla` runner's
tokens on the same compiled bundle (through the stand-in build for a Python process)."""
from __future__ import annotations

import json
import subprocess
import sys
from functools import cache

import pytest

from device import ROOT
from tests.device.android import board as android
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library

AUDIO = ROOT / "resources" / "audio"
URL = f"adb://{android.SERIAL}?backend=dla"
JFK = "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
RUNNER = "/data/local/tmp/whisperkv/bin/whisperkv-runner"


def whisperkv(board, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600, stdin=subprocess.DEVNULL, env=board.env())


@pytest.fixture(scope="module")
def deployed(android_board) -> subprocess.CompletedProcess:
    """`whisperkv deploy` of the compiled bundle to the board, once for the module."""
    r = whisperkv(android_board, "deploy", "--device", f"adb://{android.SERIAL}", "--backend", "dla", "--model",
                  str(compiled_dla_bundle()))
    assert r.returncode == 0, r.stdout + r.stderr
    return r


@cache
def python_runners(clip: str) -> dict:
    """The clip through the Python runner's `dla` backend on this PC: the reference."""
    lib = standin_library("v1+v2")
    r = subprocess.run([sys.executable, "-m", "cli.main", "transcribe", str(AUDIO / clip), "--json", "--device",
                        f"local?runner=python&backend=dla&neuron_lib={lib}", "--model", str(compiled_dla_bundle())],
                       capture_output=True, text=True, cwd=ROOT, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_deploy_ships_the_bionic_native_runner_to_data_local_tmp(android_board, deployed):
    from device.toolchain.native_runner_build import build

    assert "native runner" in deployed.stdout + deployed.stderr and "Android 14" in deployed.stdout + deployed.stderr
    shipped = android_board.root / RUNNER.lstrip("/")
    assert shipped.read_bytes() == build("aarch64-android").read_bytes()
    assert b"/system/bin/linker64" in shipped.read_bytes()[:4096]          # its interpreter: bionic's
    calls = [json.loads(line) for line in android_board.adb_log.read_text().splitlines()]
    assert any(c[2:3] == ["push"] and c[4].startswith("/data/local/tmp/whisperkv/") for c in calls if len(c) > 4)


@pytest.mark.parametrize("clip", ["test_en.wav", "test_zh.wav"])
def test_transcribe_over_adb_gives_the_python_dla_runners_tokens(android_board, deployed, clip):
    r = whisperkv(android_board, "transcribe", str(AUDIO / clip), "--json", "--device", URL)
    assert r.returncode == 0, r.stderr
    board, python = json.loads(r.stdout), python_runners(clip)
    assert board["tokens"] == python["tokens"] and board["text"] == python["text"]
    assert board["runner"] == "native" and board["os"].startswith("Android 14")
    assert board["ran_on"]["library"] == android.VENDOR_LIB
    if clip == "test_en.wav":
        assert board["text"] == JFK
    else:       # the clip whose tokens split a multi-byte character (issue 42's third case)
        assert board["language"] == "zh" and board["text"].startswith("甚至出现交易")
        assert splits_a_character(board["tokens"]), "no character split in test_zh"


def splits_a_character(tokens: list[int]) -> bool:
    """Some token's bytes are part of a character only."""
    from core.model.tokenizer import WhisperTokenizer
    from core.model.weights import find_tokenizer

    tokenizer = WhisperTokenizer.from_file(find_tokenizer())
    for token in tokens:
        try:
            tokenizer.token_bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


def test_the_stop_line_names_the_native_runner_android_and_the_library(android_board, deployed):
    r = whisperkv(android_board, "transcribe", str(AUDIO / "en_asterisk_hello-world.wav"), "--device", URL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Hello world."
    (stop,) = [line for line in r.stderr.splitlines() if line.startswith("[stop:")]
    assert "| native runner |" in stop and "| Android 14 |" in stop and f"({android.VENDOR_LIB})" in stop
    log = android_board.shell("logcat -d -s NeuronRuntime").stdout.decode()
    assert "I NeuronRuntime: STAND-IN: loaded the network /data/local/tmp/whisperkv/model/encoder.dla" in log


def test_qa_runs_the_sample_suite_over_adb(android_board, deployed, tmp_path):
    r = whisperkv(android_board, "qa", str(AUDIO / "suite.toml"), "--out", str(tmp_path / "report"), "--format",
                  "json", "--device", URL)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((tmp_path / "report" / "qa.json").read_text())
    assert "native" in json.dumps(report) and "6/6 passed" in r.stdout + r.stderr


def test_the_doctor_passes_every_rung_and_names_android_on_an_mt8189(android_board, deployed, tmp_path):
    r = whisperkv(android_board, "doctor", "--quick", "--json", "--out", str(tmp_path), "--device", URL)
    assert r.returncode == 0, r.stdout + r.stderr
    rungs = {rung["name"]: rung for rung in json.loads(r.stdout)["rungs"]}
    assert all(rungs[n]["status"] == "pass" for n in ("reach", "identity", "runtime", "deployed", "loads",
                                                     "numbers", "tokens")), rungs
    # speed and placement warn here, saying why: the times and the NPU are the STAND-IN's, not a board's
    assert {n: rung["status"] for n, rung in rungs.items() if rung["status"] != "pass"} == {
        "speed": "warn", "placement": "warn"}
    assert all("STAND-IN" in json.dumps(rungs[n]) for n in ("speed", "placement"))
    assert "Android 14 on MT8189" in json.dumps(rungs["identity"])
    neuron = (tmp_path / "logcat-neuron.txt").read_text()        # --out keeps logcat's Neuron lines
    assert " I NeuronRuntime: STAND-IN: loaded the network /data/local/tmp/whisperkv/model/" in neuron
    assert "ActivityManager" not in neuron and (tmp_path / "runner-stderr.txt").is_file()


def test_the_studio_transcribes_over_adb(android_board, deployed, qtbot, qapp, tmp_path, monkeypatch):
    from app.background import collect_garbage_on_gui_thread
    from device.link.profile import DeviceProfile
    from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait

    collect_garbage_on_gui_thread(qapp)
    monkeypatch.setenv("PATH", android_board.env()["PATH"])
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    window.device.show_profile(DeviceProfile.from_url(URL))
    open_and_wait(window, "en_asterisk_hello-world.wav")
    run = transcribe_and_wait(window, language="en", cache=True)
    assert run.error is None and run.stop_reason == "eot" and "hello world" in run.text().lower()
    assert window.board.runner["runner"] == "native"
