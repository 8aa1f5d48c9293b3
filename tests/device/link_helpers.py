"""Helpers shared by the device tests (a module with a unique name, so it never shadows another conftest)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from device import protocol as P
from device.link.transport import ProcessStream
from device.runner.serve.agent import ROOT
from tests.device.sshd import sshd_available, start_sshd


def assert_streamed(arrivals):
    """The runner streamed the tokens one by one, before `done`, and the host received them in order."""
    kinds = [type(a.event) for a in arrivals]
    assert kinds[0] is EncodedEvent and kinds[-1] is DoneEvent and arrivals[-1].final
    tokens = [a for a in arrivals if isinstance(a.event, TokenEvent)]
    done = arrivals[-1]
    assert len(tokens) > 10
    assert all(x.host_t <= y.host_t for x, y in zip(arrivals, arrivals[1:]))
    # Each step takes the runner a decoder pass, and it writes each token as it is sampled: their send stamps
    # (the runner's clock, just before the write) are distinct and before the done's. The host's arrival
    # stamps would say the same on an idle machine, but a busy one (or SSH) may hand over several frames in
    # one read: the runner's stamps are the behaviour under test, not the host's scheduling.
    assert all(a.sent_t < done.sent_t for a in tokens[:-1])
    # a runner that held the tokens and wrote them in one burst would stamp them microseconds apart
    spread_ms = (tokens[-1].sent_t - tokens[0].sent_t) * 1e3
    assert spread_ms >= 0.5 * sum(a.event.ms for a in tokens[1:])
    assert [a.event.token for a in tokens if not a.event.is_special] == done.event.tokens


class RawRunner:
    """A runner driven frame by frame, for the protocol's error cases."""

    def __init__(self, *args: str):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.stream = ProcessStream([sys.executable, "-m", "device.runner", *args], cwd=str(ROOT), env=env)
        self.parser = P.FrameParser(max_payload=0)
        self.pending: list = []

    def send(self, data: bytes) -> None:
        self.stream.write(data)

    def request(self, header: dict, payload: bytes = b"") -> None:
        self.send(P.encode_frame(header, payload))

    def event(self, timeout: float = 120.0) -> dict:
        while not self.pending:
            data = self.stream.read(timeout)
            assert data, "runner closed its stdout; log:\n" + self.stream.stderr_tail()
            self.pending += self.parser.feed(data)
        frame = self.pending.pop(0)
        assert isinstance(frame, P.Frame), frame
        return frame.header

    def until(self, pred, timeout: float = 120.0) -> list[dict]:
        out = [self.event(timeout)]
        while not pred(out[-1]):
            out.append(self.event(timeout))
        return out

    def close(self) -> None:
        self.stream.close()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    """A real OpenSSH sshd on 127.0.0.1 for the whole session (device.testing_sshd)."""
    if not sshd_available():
        pytest.skip("OpenSSH sshd is not installed (Debian: openssh-server)")
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


NO_CONFIG = "/nonexistent/ssh_config"     # keep the developer's ~/.ssh/config out of the SSH tests


def ssh_url(server, **settings) -> str:
    q = {"python": sys.executable, "dir": str(ROOT), "key": str(server.user_key), **settings}
    return f"ssh://{server.user}@127.0.0.1:{server.port}?" + "&".join(f"{k}={v}" for k, v in q.items())


STAND_IN_ADB = '''\
#!{python}
"""STAND-IN for the Android `adb` client, written by the tests: no Android device exists here.

It understands the calls AdbTransport makes and runs the `shell -T` part locally with sh.
"""
import json, os, shutil, sys

args = sys.argv[1:]
with open(os.environ["ADB_STANDIN_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
serial = None
if args[:1] == ["-s"]:
    serial, args = args[1], args[2:]
if args == ["devices", "-l"]:
    print("List of devices attached")
    print("STANDIN01              device usb:1-1 product:mt8371 model:MT8371_board device:mt8371 transport_id:1")
    print("LOCKED02               unauthorized usb:1-2 transport_id:2")
elif args[:1] == ["kill-server"]:
    pass
elif serial != "STANDIN01":
    sys.exit("adb: device '%s' not found" % serial)
elif args[:2] == ["shell", "-T"]:
    os.execvp("sh", ["sh", "-c", " ".join(args[2:])])
elif args[:1] == ["push"] and len(args) == 3:
    shutil.copyfile(args[1], args[2])
    print("%s: 1 file pushed, 0 skipped." % args[1])
else:
    sys.exit("adb stand-in: unsupported call %r" % (args,))
'''


def install_stand_in(tmp_path: Path, monkeypatch, name: str, script: str, log_var: str) -> Path:
    """Put a stand-in executable `name` first on PATH; it appends its argv to the returned log (one JSON
    list a line, path in $log_var). Stand-ins replace tools that cannot exist here (adb, ncc-tflite)."""
    bindir = tmp_path / f"standin-{name}"
    bindir.mkdir(parents=True)
    exe = bindir / name
    exe.write_text(script.format(python=sys.executable))
    exe.chmod(0o755)
    log = tmp_path / f"{name}-calls.jsonl"
    log.touch()
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(log_var, str(log))
    return log


# STAND-IN for Android's `getprop`, written by the tests: no Android device exists here. It answers what an MT8371
# Android image answers (issue 54: ro.board.platform mt8189, ro.product.cpu.abi arm64-v8a) and nothing else.
ANDROID_PROPS = {"ro.build.version.release": "14", "ro.board.platform": "mt8189", "ro.product.cpu.abi": "arm64-v8a"}
STAND_IN_UNAME = '#!/bin/sh\n# STAND-IN for an arm64 board\'s uname (test only)\n[ "$1" = -m ] && echo aarch64 && ' \
    'exit 0\nexec /bin/uname "$@"\n'


def stand_in_android(tmp_path: Path, monkeypatch, props: dict | None = None, arm64: bool = False) -> Path:
    """Put a STAND-IN `getprop` (and with `arm64` a `uname -m` that says aarch64) first on PATH, so that a shell
    here answers as an Android board's does; returns its folder."""
    bindir = tmp_path / "standin-android"
    bindir.mkdir(parents=True, exist_ok=True)
    cases = "".join(f"  {k}) echo {v} ;;\n" for k, v in (ANDROID_PROPS if props is None else props).items())
    scripts = {"getprop": f'#!/bin/sh\n# STAND-IN for Android\'s getprop (test only)\ncase "$1" in\n{cases}esac\n'}
    if arm64:
        scripts["uname"] = STAND_IN_UNAME
    for name, text in scripts.items():
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return bindir
