"""From a device target to a transport and a BoardClient (the wire); device/link/decoder.py builds on these.
A transport is a row of device/link/urls.py::SCHEMES and its class: open_transport reads the row."""
from __future__ import annotations

import importlib

from device.link.client import BoardClient
from device.link.target import Target
from device.link.transport import Transport
from device.link.urls import SCHEMES, DeviceURL, parse_device_url


def transport_class(scheme: str) -> type[Transport]:
    """The Transport class of a scheme's row, imported now: paramiko only when an ssh:// device opens."""
    module, _, name = SCHEMES[scheme].transport.partition(":")
    return getattr(importlib.import_module(module), name)


def open_transport(url: str | DeviceURL | None = "local", *, trust_host_key: str | None = None,
                   password: str | None = None, **options) -> Transport:
    """`local` (default), `ssh://user@host[:port]`, `adb://SERIAL` or another scheme of SCHEMES; nothing connects
    until used. `options`: the transport's own (an SSH transport's known_hosts, allow_agent, config_path)."""
    u = parse_device_url(url)
    return transport_class(u.scheme).from_url(u, password=password, trust_host_key=trust_host_key, **options)


def open_client(target: Target, *, transport: Transport | None = None, **client_options) -> BoardClient:
    """A BoardClient for a runner target (device/link/target.py::parse_target), not yet connected: call
    connect(), or use it in a with block. `transport`: one already opened for it."""
    if target.in_process:
        raise ValueError("an in-process target has no runner to connect to (device/link/decoder.py)")
    transport = transport or open_transport(target.url, trust_host_key=target.trust_host_key,
                                            password=target.password)
    return BoardClient(transport, runner_args=target.runner_args(), **client_options)
