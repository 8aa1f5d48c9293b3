"""Which runner a transport starts (device/link/runner_choice.py): ?runner= says, else deploy's record in the runner's
folder, else python; the native runner gets only the flags it takes, from its deployed place (DIR/bin beside
DIR/model) or, on this PC without ?dir=, built on demand."""
from __future__ import annotations

import json
import os
import platform
import stat
import sys
from pathlib import Path

import pytest

import device.link.adb
import device.link.local
import device.link.ssh
from device import ROOT
from device.link.client import BoardClient, RunnerError
from device.link.connect import open_transport
from device.link.local import LocalTransport
from device.link.runner_choice import NATIVE_EXE, chosen_runner, native_args
from device.link.ssh import SshTransport
from device.link.transport import CommandResult, LinkLost
from device.toolchain import native_runner_build
from tests.device.link_helpers import NO_CONFIG

PYTHON_ONLY = ["--encoder-cache-mb", "0", "--log-level", "WARNING"]
# A STAND-IN for the native runner, written by the tests: as the C runner, it refuses a flag outside the spec's
# runner flags with exit status 2; it answers hello with model_missing naming its argv and where it looked.
FAKE_NATIVE = '''#!{python}
import json, os, sys
sys.path.insert(0, {root!r})
from device import protocol as P
flags = {{v["flag"]: v["kind"] for v in json.load(open({spec!r}))["runner_flags"].values()}}
args, i = sys.argv[1:], 0
while i < len(args):
    if args[i] not in flags:
        sys.stderr.write("unknown flag %s\\n" % args[i])
        sys.exit(2)
    i += 1 if flags[args[i]] == "flag" else 2
parser, out = P.FrameParser(max_payload=0), os.fdopen(1, "wb", 0)
model = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0]))), "model")
while data := os.read(0, 65536):
    for frame in parser.feed(data):
        if frame.header.get("op") == "hello":
            out.write(P.encode_frame({{"type": "error", "code": "model_missing",
                                      "message": json.dumps({{"argv": args, "looked_in": model}})}}))
'''


def fake_native(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAKE_NATIVE.format(python=sys.executable, root=str(ROOT),
                                       spec=str(ROOT / "device" / "spec" / "runner_spec.json")))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def refused_hello(transport, args: list[str]) -> dict:
    """What the stand-in said to hello, started by `transport` with `args` beside the target's."""
    client = BoardClient(transport, runner_args=args, connect_timeout=60)
    try:
        with pytest.raises(RunnerError, match="model_missing") as caught:
            client.connect()
    finally:
        client.close()
    return json.loads(str(caught.value).split("(model_missing): ", 1)[1].split(" — ")[0])


class Recorded:
    """A transport's `run` answering `cat manifest.json` with a record naming `runner` (None: no record)."""

    def __init__(self, runner: str | None):
        self.runner, self.asked = runner, []

    def __call__(self, argv, timeout=60.0, cwd=None):
        self.asked.append((argv, cwd))
        if self.runner is None:
            return CommandResult(1, b"", b"cat: manifest.json: No such file or directory")
        return CommandResult(0, json.dumps({"runner_version": "1", "runner": self.runner}).encode(), b"")


def test_the_native_runner_gets_only_the_flags_it_takes_with_their_values():
    args = ["--model", "/m", *PYTHON_ONLY, "--npu-profile", "--backend", "dla", "--workload", "serve", "--x"]
    assert native_args(args) == ["--model", "/m", "--npu-profile", "--backend", "dla", "--workload", "serve"]
    assert native_args(["--log-level=INFO", "--neuron-api=v2"]) == ["--neuron-api=v2"]


def test_the_url_wins_then_the_deploy_record_then_python(monkeypatch):
    t = SshTransport("board", config_path=NO_CONFIG, dir="~/w")
    monkeypatch.setattr(t, "run", Recorded("native"))
    assert chosen_runner(t, "python") == "python" and t.run.asked == []
    assert chosen_runner(t, None) == "native" and t.run.asked == [(["cat", "manifest.json"], "~/w")]
    monkeypatch.setattr(t, "run", Recorded(None))
    assert chosen_runner(t, None) == "python"
    monkeypatch.setattr(t, "run", Recorded("python"))
    assert chosen_runner(t, "native") == "native"


def test_ssh_starts_the_deployed_native_runner_in_the_runner_folder_with_its_flags(monkeypatch):
    t = open_transport("ssh://root@board?dir=/opt/wkv&runner=native", config_path=NO_CONFIG)
    lines = []
    monkeypatch.setattr(t, "_exec", lambda cmd: lines.append(cmd))
    monkeypatch.setattr(t, "run", Recorded(None))       # getprop too: not Android
    monkeypatch.setattr(device.link.ssh, "SshStream", lambda chan: None)
    t.start_runner(["--backend", "dla", *PYTHON_ONLY])
    assert lines == [f"cd /opt/wkv && exec {NATIVE_EXE} --backend dla"]
    py = open_transport("ssh://root@board?dir=~/wkv&python=/usr/bin/python3", config_path=NO_CONFIG)
    monkeypatch.setattr(py, "_exec", lambda cmd: lines.append(cmd))
    monkeypatch.setattr(py, "run", Recorded(None))
    py.start_runner(["--backend", "dla", *PYTHON_ONLY])
    assert lines[1] == ('cd "$HOME"/wkv && exec /usr/bin/python3 -m device.runner --backend dla '
                        '--encoder-cache-mb 0 --log-level WARNING')


def test_adb_starts_the_runner_deploy_recorded(monkeypatch):
    t = open_transport("adb://SER?dir=/data/local/tmp/wkv")
    started = []
    monkeypatch.setattr(t, "_check", lambda: None)
    monkeypatch.setattr(t, "run", Recorded("native"))
    monkeypatch.setattr(device.link.adb, "_adb", lambda: "adb")
    monkeypatch.setattr(device.link.adb, "ProcessStream", lambda argv: started.append(argv))
    t.start_runner(["--model", "/m", *PYTHON_ONLY])
    assert started == [["adb", "-s", "SER", "shell", "-T", f"cd /data/local/tmp/wkv && exec {NATIVE_EXE} --model /m"]]


def test_a_local_deploy_starts_its_native_runner_which_looks_for_the_bundle_beside_its_folder(tmp_path):
    fake_native(tmp_path / NATIVE_EXE)
    (tmp_path / "manifest.json").write_text(json.dumps({"runner": "native"}))
    said = refused_hello(open_transport(f"local?dir={tmp_path}"), ["--backend", "dla", *PYTHON_ONLY])
    assert said == {"argv": ["--backend", "dla"], "looked_in": str(tmp_path / "model")}


def test_without_the_filter_the_native_runner_stops_at_a_python_only_flag(tmp_path, monkeypatch):
    fake_native(tmp_path / NATIVE_EXE)
    monkeypatch.setattr(device.link.local, "native_args", lambda args: args)
    with pytest.raises(LinkLost):
        refused_hello(open_transport(f"local?dir={tmp_path}&runner=native"), PYTHON_ONLY)


def test_local_native_without_a_folder_is_built_for_this_pc_on_demand(tmp_path, monkeypatch):
    built = []

    def build(arch):
        built.append(arch)
        return fake_native(tmp_path / "cache" / "whisperkv-runner")

    monkeypatch.setattr(native_runner_build, "build", build)
    said = refused_hello(LocalTransport(runner="native"), ["--workload", "one-shot", *PYTHON_ONLY])
    assert built == [platform.machine()] and said["argv"] == ["--workload", "one-shot"]


def test_a_missing_compiler_is_one_line_naming_what_to_install(monkeypatch):
    arch = platform.machine()
    monkeypatch.setitem(native_runner_build.TARGETS, arch, native_runner_build.Target(arch, "no-such-cc", "gcc"))
    with pytest.raises(native_runner_build.BuildError) as caught:
        LocalTransport(runner="native").start_runner([])
    assert str(caught.value) == (f"no C compiler for {arch} (no-such-cc is not on PATH) — install it: "
                                 "apt-get install gcc")


@pytest.mark.skipif(platform.machine() not in native_runner_build.TARGETS, reason="no native build for this CPU")
def test_local_runner_native_reaches_the_c_runner():
    """The real build: it answers hello with model_missing, as it does without a bundle."""
    client = BoardClient(open_transport("local?runner=native"), runner_args=["--backend", "dla", *PYTHON_ONLY])
    try:
        with pytest.raises(RunnerError, match="model_missing"):
            client.connect()
    finally:
        client.close()
    assert os.access(native_runner_build.build(platform.machine()), os.X_OK)
