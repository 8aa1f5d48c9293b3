"""The transport recipe (docs/architecture.md, "How to add a transport"): a transport is one file implementing
device.link.transport.Transport, with a `from_url` classmethod, and one row of device/link/urls.py::SCHEMES. Here a
toy transport, this checkout's runner on a pipe, is added as that row and a request runs through it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.decode.events import DoneEvent
from core.decode.options import DecodeOptions
from device import ROOT
from device.link.connect import open_client, open_transport
from device.link.target import parse_target
from device.link.transport import CommandResult, ProcessStream, Progress, Transport, TransportError
from device.link.urls import SCHEMES, DeviceURL, DeviceURLError, Scheme, no_address, parse_device_url


class PipeTransport(Transport):
    """The toy's code: the runner as a child process of this one, talking over its stdin and stdout."""

    label = "pipe"

    def __init__(self, python: str | None = None):
        self.python = python or sys.executable
        self.runner_dir = str(ROOT)

    @classmethod
    def from_url(cls, url: DeviceURL, password: str | None = None, trust_host_key: str | None = None,
                 **options) -> PipeTransport:
        return cls(url.python)

    def start_runner(self, args: list[str]) -> ProcessStream:
        env = dict(os.environ, PYTHONPATH=self.runner_dir, PYTHONUNBUFFERED="1")
        return ProcessStream([self.python, "-m", "device.runner", *args], cwd=self.runner_dir, env=env)

    def run(self, argv: list[str], timeout: float = 60.0, cwd: str | None = None) -> CommandResult:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=timeout)
        return CommandResult(p.returncode, p.stdout, p.stderr)

    def put(self, sources: list[Path], remote: str, progress: Progress | None = None) -> None:
        raise TransportError("a pipe takes no files", "deploy to local or a board")


@pytest.fixture
def pipe_row(monkeypatch):
    """The recipe's one row: how the URL names the place (the scheme alone, as `local`) and the class."""
    monkeypatch.setitem(SCHEMES, "pipe", Scheme("pipe", no_address, f"{__name__}:PipeTransport"))


def test_without_its_row_the_scheme_is_unknown():
    with pytest.raises(DeviceURLError, match="unknown device scheme 'pipe'"):
        parse_device_url("pipe://")


def test_a_toy_transport_is_one_row_and_a_request_runs_through_it(pipe_row, en_mel):
    target = parse_target(f"pipe?python={sys.executable}&backend=numpy")
    assert (target.url.scheme, str(target.url), target.python) == ("pipe", "pipe", sys.executable)
    assert parse_target(target.text()) == target           # its URL reads back
    transport = open_transport(target.url)
    assert isinstance(transport, PipeTransport) and transport.python == sys.executable
    with open_client(target) as client:
        assert client.connect().backend == "numpy"
        arrivals = list(client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=3)))
    assert isinstance(arrivals[-1].event, DoneEvent) and arrivals[-1].event.reason == "max_tokens"
