"""`whisperkv deploy`, `device-info` and `transcribe --device` as a user runs them (HOME points at a temp dir)."""
import io
import json
import shutil
import subprocess
import sys

import pytest

from cli.main import main
from device.info.info import FIELDS
from device.runner.serve.agent import ROOT
from tests.device.link_helpers import sshd  # noqa: F401  (the real OpenSSH server fixture)


@pytest.fixture
def server(sshd):  # noqa: F811
    return sshd


@pytest.fixture
def home(tmp_path, monkeypatch, server):
    """A user whose default identity file is authorised on the server, and no known_hosts yet."""
    (tmp_path / ".ssh").mkdir()
    shutil.copy(server.user_key, tmp_path / ".ssh" / "id_ed25519")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return tmp_path


def url(server) -> str:
    return f"ssh://{server.user}@127.0.0.1:{server.port}?python={sys.executable}&dir={ROOT}"


def fingerprint(server) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", str(server.workdir / "host_key.pub")], capture_output=True,
                         text=True, check=True).stdout
    return out.split()[1]


def test_device_info_local_json(capsys):
    assert main(["device-info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert list(info) == list(FIELDS) and info["device"] == "local"
    # What the NPU path needs, on this PC: no NPU, no neuronrt, ai_edge_litert installed.
    assert info["npu"] == [] and info["neuronrt"] is None and info["tflite"]["ai_edge_litert"]
    assert info["npu_ready"].startswith("no: missing /dev/apusys*")


def test_a_one_shot_transcribe_asks_its_local_runner_to_spin_and_an_ssh_one_not(home, server, capsys, monkeypatch):
    """The runner flags `whisperkv transcribe` starts each link's runner with (device/link/connect.py)."""
    from device.link.local import LocalTransport
    from device.link.ssh import SshTransport

    started = []
    for cls in (LocalTransport, SshTransport):
        def spy(self, args, _real=cls.start_runner):
            started.append((type(self).__name__, list(args)))
            return _real(self, args)
        monkeypatch.setattr(cls, "start_runner", spy)
    (home / ".ssh" / "known_hosts").write_text(server.known_hosts_line + "\n")
    wav = str(ROOT / "resources" / "audio" / "test_en.wav")
    for device in ("local", url(server)):
        assert main(["transcribe", wav, "--device", device, "--language", "en", "--max-tokens", "3"]) == 0
    assert [(name, "one-shot" in args) for name, args in started] == [("LocalTransport", True), ("SshTransport", False)]
    assert "--workload" not in started[1][1]


def test_device_info_text_shows_the_npu_readiness(capsys):
    assert main(["device-info"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["neuronrt"] == "not found" and lines["ncc_tflite"] == "not found"
    assert "ai_edge_litert " in lines["tflite"] and lines["npu_ready"].startswith("no: missing /dev/apusys*, a Neuron "
                                                                             "runtime library")


def test_bad_device_url_exits_2_with_the_fix(capsys):
    assert main(["device-info", "--device", "telnet://board"]) == 2
    err = capsys.readouterr().err
    assert "unknown device scheme" in err and "ssh://user@host" in err


def test_unknown_host_key_exits_nonzero_then_explicit_trust_works(home, server, capsys):
    fp = fingerprint(server)
    assert main(["device-info", "--device", url(server)]) == 2      # no prompt: stdin is not a terminal
    err = capsys.readouterr().err
    assert fp in err and f"--trust-host-key {fp}" in err and "known_hosts" in err
    assert main(["device-info", "--device", url(server), "--trust-host-key", fp]) == 0
    assert "runner_version" in capsys.readouterr().out


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("answer, rc", [("no", 2), ("yes", 0)])
def test_on_a_terminal_an_unknown_host_key_is_asked_about(home, server, capsys, monkeypatch, answer, rc):
    monkeypatch.setattr(sys, "stdin", Terminal())
    asked = []
    monkeypatch.setattr("builtins.input", lambda q: asked.append(q) or answer)
    assert main(["device-info", "--device", url(server)]) == rc
    assert fingerprint(server) in asked[0]
    known = home / ".ssh" / "known_hosts"
    if answer == "yes":
        assert known.read_text().split()[1:] == server.known_hosts_line.split()[1:]
        assert "runner_version" in capsys.readouterr().out
    else:
        assert not known.exists()


def test_deploy_local_dir_then_unchanged(tmp_path, capsys):
    target = tmp_path / "wkv"
    assert main(["deploy", "--dir", str(target), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert "model/model.bin" in first["uploaded"] and (target / "manifest.json").is_file()
    assert main(["deploy", "--dir", str(target)]) == 0
    assert "0 uploaded" in capsys.readouterr().out


def test_deploy_backend_tflite_ships_no_onnx_and_says_how_to_run_it(tmp_path, capsys):
    from tests.device.toolchain.test_compile import make_bundle

    target = tmp_path / "wkv"
    src = make_bundle(tmp_path / "bundle")
    assert main(["deploy", "--dir", str(target), "--backend", "tflite", "--model", str(src)]) == 0
    out = capsys.readouterr().out
    assert f"--device 'local?dir={target}&backend=tflite'" in out and "delegate=PATH" in out
    assert (target / "model" / "encoder.tflite").is_file() and not list((target / "model").glob("*.onnx"))
    assert json.loads((target / "manifest.json").read_text())["backend"] == "tflite"


def test_deploy_backend_tflite_of_an_onnx_bundle_is_one_line_exit_2(tmp_path, capsys):
    from tests.device.toolchain.test_compile import make_bundle

    src = make_bundle(tmp_path / "bundle", tflite=False)
    assert main(["deploy", "--dir", str(tmp_path / "wkv"), "--backend", "tflite", "--model", str(src)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no .tflite graphs" in err[0] and "whisperkv export --format tflite" in err[0]


def test_transcribe_over_ssh_streams_with_host_arrival_times(home, server, capsys):
    (home / ".ssh" / "known_hosts").write_text(server.known_hosts_line + "\n")
    wav = str(ROOT / "resources" / "audio" / "test_en.wav")
    assert main(["transcribe", wav, "--device", url(server), "--language", "en", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "ask not what your country can do for you" in doc["text"].lower()
    assert doc["stop_reason"] == "eot" and doc["link"]["device"].startswith("ssh://")
    arrivals = doc["link"]["host_ms"]
    assert arrivals == sorted(arrivals) and len(set(arrivals)) > len(arrivals) // 2
