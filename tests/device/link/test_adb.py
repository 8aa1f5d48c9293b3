"""AdbTransport through a STAND-IN `adb` executable (tests/device/link_helpers.py: STAND_IN_ADB).

No Android device exists here: the stand-in answers `devices -l`, copies files for `push` and runs
the `shell -T` command line locally with sh, so the real command lines AdbTransport builds are run.
"""
import json
import sys

import pytest

from device.link.adb import AdbTransport, list_devices
from device.link.connect import open_client
from device.link.target import parse_target
from device.link.transport import TransportError
from device.runner.backends import REGISTRY
from device.runner.serve.agent import ROOT


def calls(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_devices_are_listed_with_state_and_properties(stand_in_adb):
    devices = {d.serial: d for d in list_devices()}
    assert devices["STANDIN01"].state == "device" and devices["STANDIN01"].props["model"] == "MT8371_board"
    assert devices["LOCKED02"].state == "unauthorized"
    assert calls(stand_in_adb) == [["devices", "-l"]]


def test_shell_runs_with_T_and_shlex_quoting(stand_in_adb):
    t = AdbTransport("STANDIN01")
    res = t.run(["printf", "%s|", "two words", "$HOME", "it's"])
    assert res.rc == 0 and res.text == "two words|$HOME|it's|"
    shell = [c for c in calls(stand_in_adb) if "shell" in c][0]
    assert shell[:4] == ["-s", "STANDIN01", "shell", "-T"]
    assert t.run(["sh", "-c", "exit 7"]).rc == 7


def test_unauthorized_and_missing_devices_are_clear(stand_in_adb):
    with pytest.raises(TransportError, match="unauthorized") as err:
        AdbTransport("LOCKED02").run(["true"])
    assert "USB debugging" in err.value.fix
    with pytest.raises(TransportError, match="STANDIN01 \\(device\\)"):
        AdbTransport("NOPE").run(["true"])


def test_push_joins_split_sources_on_the_device(stand_in_adb, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"\x00\x01" * 1000)
    b.write_bytes(b"\n\r\xff")
    seen = []
    AdbTransport("STANDIN01").put([a, b], str(tmp_path / "joined"), lambda d, t: seen.append((d, t)))
    assert (tmp_path / "joined").read_bytes() == a.read_bytes() + b.read_bytes()
    assert seen[-1] == (2003, 2003)
    assert sum(1 for c in calls(stand_in_adb) if "push" in c) == 2
    assert not list(tmp_path.glob("joined.part*"))


def test_missing_adb_client_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TransportError, match="adb") as err:
        list_devices()
    assert "apt install adb" in err.value.fix


def test_runner_over_adb_shell_is_binary_safe(stand_in_adb, en_mel):
    url = f"adb://STANDIN01?python={sys.executable}&dir={ROOT}"
    with open_client(parse_target(url)) as client:
        assert client.info.backend in REGISTRY
        # float16 mel bytes include \n, \r and \x00: any pty or newline translation would corrupt them.
        got = list(client.transcribe(en_mel, {"language": "en", "max_tokens": 2}))
    assert got[-1].event.reason == "max_tokens" and len(got[-1].event.tokens) == 2
    assert any(c[2:4] == ["shell", "-T"] and "device.runner" in c[-1] for c in calls(stand_in_adb))


def test_a_runner_dir_named_like_a_command_stays_one_path(stand_in_adb, tmp_path):
    """Deploy to, and run the runner from, `run dir;touch PWNED`: the `;` must never reach a shell unquoted."""
    from pathlib import Path
    from urllib.parse import quote

    from device.deploy.deploy import deploy

    target = tmp_path / "run dir;touch PWNED"
    result = deploy(AdbTransport("STANDIN01", python=sys.executable), dir=str(target))
    assert (target / "model" / "model.bin").is_file() and result["upload"] == "with adb push"
    with open_client(parse_target(f"adb://STANDIN01?python={sys.executable}&dir={quote(str(target))}")) as client:
        assert client.info.raw["model"]["source"] == f"ctranslate2:{target / 'model'}"
    assert not [p for p in (tmp_path, Path.home(), Path.cwd()) if (p / "PWNED").exists()]
