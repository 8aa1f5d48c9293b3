"""From a device target to a transport and a BoardClient (the wire); device/link/decoder.py builds on these."""
from __future__ import annotations

from device.link.client import BoardClient
from device.link.target import Target
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

        return SshTransport(u.host, u.user, u.port, key=u.key, password=password,
                            trust_host_key=trust_host_key or u.trust_host_key, python=u.python, dir=u.dir,
                            **ssh_options)
    if u.scheme == "adb":
        from device.link.adb import AdbTransport

        return AdbTransport(u.host, python=u.python, dir=u.dir)
    from device.link.local import LocalTransport

    return LocalTransport(python=u.python, dir=u.dir)


def open_client(target: Target, *, transport: Transport | None = None, **client_options) -> BoardClient:
    """A BoardClient for a runner target (device/link/target.py::parse_target), not yet connected: call
    connect(), or use it in a with block. `transport`: one already opened for it."""
    if target.in_process:
        raise ValueError("an in-process target has no runner to connect to (device/link/decoder.py)")
    transport = transport or open_transport(target.url, trust_host_key=target.trust_host_key,
                                            password=target.password)
    return BoardClient(transport, runner_args=target.runner_args(), **client_options)
