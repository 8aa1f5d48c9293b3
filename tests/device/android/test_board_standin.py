"""The STAND-IN Android board (board.py; no Android device exists here) at the shell, and the native runner built for
bionic decoding on it: pushed with the STAND-IN adb to /data/local/tmp, started with `adb shell -T` as adb's shell
user, it finds the STAND-IN Neuron runtime (its bionic WIRE build, which hands every graph to the STAND-IN APU on
the PC) at /vendor/lib64/mt8189 and decodes test_en with the Python `dla` runner's tokens."""
from __future__ import annotations

import json

import pytest

from device.link.transport import ProcessStream, Transport
from tests.device.android import board as android

DIR = "/data/local/tmp/whisperkv"


def text(board, line: str) -> str:
    r = board.shell(line, timeout=60)
    assert r.returncode == 0, (line, r.stdout, r.stderr)
    return r.stdout.decode()


def test_the_standin_board_answers_getprop_as_an_mt8189_on_android_14(android_board):
    assert text(android_board, "getprop ro.board.platform").strip() == "mt8189"
    assert text(android_board, "getprop ro.product.cpu.abi").strip() == "arm64-v8a"
    assert text(android_board, "getprop ro.build.version.release").strip() == "14"
    assert text(android_board, "getprop ro.no.such.prop fallback").strip() == "fallback"
    listed = text(android_board, "getprop").splitlines()
    assert "[ro.board.platform]: [mt8189]" in listed and all(ln.startswith("[") for ln in listed)


def test_the_standin_board_has_no_python_and_its_shell_user_writes_only_in_data_local_tmp(android_board):
    if android_board.arch != "aarch64":
        pytest.xfail("the arm64 busybox could not be fetched: the x86-64 fallback shell says x86_64")
    assert text(android_board, "uname -m").strip() == "aarch64"
    assert android_board.shell("command -v python3 || command -v python").returncode != 0
    assert not [p for d in ("system", "vendor", "data") for p in (android_board.root / d).rglob("*python*")]
    assert text(android_board, "id -u").strip() == str(android.SHELL_UID)
    assert android_board.shell("touch /system/bin/x").returncode != 0
    assert text(android_board, "cd /data/local/tmp && echo made > f && cat f && rm f") == "made\n"
    r = android_board.shell("cat", input=bytes(range(256)) * 64)
    assert r.returncode == 0 and r.stdout == bytes(range(256)) * 64      # binary-safe both ways
    assert android_board.shell("exit 7").returncode == 7


def test_the_standin_adb_lists_the_board_and_pushes_as_the_shell_user(android_board, tmp_path):
    import subprocess

    adb = str(android_board.bin / "adb")
    listed = subprocess.run([adb, "devices", "-l"], capture_output=True, text=True, env=android_board.env()).stdout
    assert f"{android.SERIAL}" in listed and "product:mt8189" in listed
    (tmp_path / "f").write_bytes(b"pushed")
    r = subprocess.run([adb, "-s", android.SERIAL, "push", str(tmp_path / "f"), "/data/local/tmp/t/f"],
                       capture_output=True, text=True, env=android_board.env())
    assert r.returncode == 0, r.stderr
    assert text(android_board, "stat -c %u /data/local/tmp/t /data/local/tmp/t/f").split() == ["2000", "2000"]
    r = subprocess.run([adb, "-s", android.SERIAL, "push", str(tmp_path / "f"), "/vendor/f"], capture_output=True,
                       text=True, env=android_board.env())
    assert r.returncode != 0 and "Permission denied" in r.stderr
    calls = [json.loads(line) for line in android_board.adb_log.read_text().splitlines()]
    assert ["devices", "-l"] in calls


class AdbShell(Transport):
    """Only the start of a runner on the board, its command line given: what this test drives by itself."""

    label = f"adb://{android.SERIAL}"

    def __init__(self, board, line: str):
        self.board, self.line = board, line

    def start_runner(self, args):
        return ProcessStream([str(self.board.bin / "adb"), "-s", android.SERIAL, "shell", "-T", self.line])

    def run(self, argv, timeout=60.0, cwd=None):
        raise NotImplementedError

    def put(self, sources, remote, progress=None):
        raise NotImplementedError


def pushed_runner(board) -> str:
    """The bionic native runner and the compiled bundle's files it reads pushed to DIR; the line that starts it."""
    import subprocess

    from device.deploy.native_deploy import ships
    from device.toolchain.native_runner_build import BuildError, build
    from tests.device.bundle_helpers import compiled_dla_bundle

    try:
        exe = build("aarch64-android")
    except BuildError as exc:
        pytest.skip(f"the native runner is not built for Android here: {exc}")
    bundle = compiled_dla_bundle()
    wanted = [f for f in sorted(bundle.iterdir()) if (ships(f.name) or f.name == "model.json")
              and "attention" not in f.name]          # the native runner has no step with attention
    files = [(exe, f"{DIR}/bin/whisperkv-runner"), *[(f, f"{DIR}/model/{f.name}") for f in wanted]]
    for src, dst in files:
        r = subprocess.run([str(board.bin / "adb"), "-s", android.SERIAL, "push", str(src), dst],
                           capture_output=True, text=True, env=board.env())
        assert r.returncode == 0, r.stderr
    text(board, f"chmod 755 {DIR}/bin/whisperkv-runner")
    return f"cd {DIR} && LD_LIBRARY_PATH=/vendor/lib64/mt8189 exec bin/whisperkv-runner --model model"


def test_the_bionic_native_runner_decodes_test_en_on_the_standin_runtime_with_the_python_runners_tokens(
        android_board, en_mel):
    from core.decode.events import DoneEvent
    from core.decode.options import DecodeOptions
    from device.link.client import BoardClient
    from device.link.local import LocalTransport
    from tests.device.bundle_helpers import compiled_dla_bundle, standin_library

    def decoded(transport, args=()):
        with BoardClient(transport, runner_args=list(args)) as client:
            info = client.connect()
            events = [a.event for a in client.transcribe(en_mel[:1], DecodeOptions(language="en"))]
            return info, [e for e in events if isinstance(e, DoneEvent)][-1]

    android_info, android_done = decoded(AdbShell(android_board, pushed_runner(android_board)))
    python_args = ["--backend", "dla", "--model", str(compiled_dla_bundle()), "--neuron-lib",
                   str(standin_library("v1+v2"))]
    _, python_done = decoded(LocalTransport(runner="python"), python_args)
    assert android_done.tokens == python_done.tokens and android_done.reason == "eot"
    assert android_done.text.strip().startswith("And so my fellow Americans")
    assert android.VENDOR_LIB in json.dumps(android_info.__dict__, default=str)
    log = text(android_board, "logcat -d -s NeuronRuntime")
    assert "STAND-IN: loaded the network /data/local/tmp/whisperkv/model/encoder.dla" in log
    assert "ActivityManager" not in log
