"""From a device URL to a transport and a connected BoardClient."""
from __future__ import annotations

from device.link.client import BoardClient
from device.link.transport import Transport
from device.link.urls import DeviceURL, parse_device_url


def open_transport(url: str | DeviceURL | None = "local", *, trust_host_key: str | None = None,
                   password: str | None = None, **ssh_options) -> Transport:
    """`local` (default), `ssh://user@host[:port]` or `adb://SERIAL`; nothing connects until used."""
    u = parse_device_url(url)
    if u.scheme == "ssh":
        from device.link.ssh import (
            SshTransport,  # paramiko is only needed for SSH devices
        )

        return SshTransport(u.host, u.user, u.port, key=u.key, password=password, trust_host_key=trust_host_key,
                            python=u.python, dir=u.dir, **ssh_options)
    if u.scheme == "adb":
        from device.link.adb import AdbTransport

        return AdbTransport(u.host, python=u.python, dir=u.dir)
    from device.link.local import LocalTransport

    return LocalTransport(python=u.python, dir=u.dir)


def workload_args(url: str | DeviceURL | None, workload: str) -> list[str]:
    """The runner flag for what a caller will ask of it (device/runner/runtime_config.py: `one-shot` for a single
    transcription, `serve` for a live stream or the studio). Only for the local runner: it is always this
    checkout's, where a board's may predate the flag (an unknown flag would stop it)."""
    return ["--workload", workload] if parse_device_url(url).scheme == "local" else []


def runner_args(url: str | DeviceURL | None) -> list[str]:
    u = parse_device_url(url)
    return [arg for name in ("backend", "model", "delegate", "neuron_lib") if getattr(u, name)
            for arg in (f"--{name.replace('_', '-')}", getattr(u, name))]


def open_client(url: str | DeviceURL | None = "local", *, trust_host_key: str | None = None,
                password: str | None = None, transport: Transport | None = None, **client_options) -> BoardClient:
    """A BoardClient for the device (not yet connected: call connect(), or use it in a with block)."""
    transport = transport or open_transport(url, trust_host_key=trust_host_key, password=password)
    return BoardClient(transport, runner_args=runner_args(url), **client_options)
