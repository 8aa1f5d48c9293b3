"""Device URLs: `local`, `ssh://[user@]host[:port]` and `adb://SERIAL`, with optional query settings.

A scheme is one row of SCHEMES: how its URL names where the runner is, and the Transport that reaches it
(device/link/connect.py opens it). The query's keys are the rows of device/spec/settings.py that the URL takes, e.g.
`ssh://root@board?python=/usr/bin/python3&backend=dla&neuron_lib=PATH`; the URL keeps their text, the target
(device/link/target.py) parses them into its typed fields.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from urllib.parse import SplitResult, parse_qs, unquote, urlencode, urlsplit

from core.errors import WhisperKVError
from device.spec.settings import SETTINGS, Setting, is_set


class DeviceURLError(WhisperKVError):
    code = "bad_device_url"


Address = dict            # host, user, port: the keywords of DeviceURL that say where the runner is


def no_address(parts: SplitResult, text: str) -> Address:
    """`local`: this PC, named by the scheme alone."""
    return {}


def serial_address(parts: SplitResult, text: str) -> Address:
    """`adb://SERIAL`: a serial, or adb-over-TCP's HOST:PORT, whole."""
    serial = unquote(parts.netloc or parts.path.lstrip("/"))
    if not serial:
        raise DeviceURLError(f"{text!r} names no device serial", "use adb://SERIAL (see `adb devices -l`)")
    return {"host": serial}


def host_address(parts: SplitResult, text: str) -> Address:
    """`ssh://[user@]host[:port]`: a host or ~/.ssh/config alias."""
    try:
        port = parts.port
    except ValueError:
        raise DeviceURLError(f"bad port in {text!r}", "use ssh://user@host:PORT with a number 1-65535") from None
    if not parts.hostname:
        raise DeviceURLError(f"{text!r} names no host", url_fix())
    return {"host": parts.hostname, "user": unquote(parts.username) if parts.username else None, "port": port}


@dataclass(frozen=True)
class Scheme:
    """A transport's row. `transport` is its class as "module:Class", imported by device/link/connect.py only when
    one is opened (paramiko only for ssh://); the class's `from_url(url, password=, trust_host_key=, **options)`
    makes it from a DeviceURL."""

    form: str                                       # how its URL is written, for a fix
    address: Callable[[SplitResult, str], Address]
    transport: str


SCHEMES: dict[str, Scheme] = {
    "local": Scheme("local", no_address, "device.link.local:LocalTransport"),
    "ssh": Scheme("ssh://user@host[:port]", host_address, "device.link.ssh:SshTransport"),
    "adb": Scheme("adb://SERIAL", serial_address, "device.link.adb:AdbTransport"),
}


def url_fix() -> str:
    forms = [s.form for s in SCHEMES.values()]
    return f"use {', '.join(forms[:-1])} or {forms[-1]} (settings: ?python=/usr/bin/python3&dir=~/whisperkv)"


def url_settings() -> list[Setting]:
    return [s for s in SETTINGS if s.url]


class DeviceURL:
    """Where a runner is (`scheme`, `host`: an ssh host or ~/.ssh/config alias, or an adb serial; `user`, `port`)
    and the URL's query settings as written, by name (`settings`). The transport's own settings (the rows the
    runner does not take) are attributes: `runner`, `python`, `dir`, `key`, `trust_host_key`."""

    def __init__(self, scheme: str, host: str = "", user: str | None = None, port: int | None = None, **settings):
        known = {s.name for s in url_settings()}
        unknown = [name for name in settings if name not in known]
        if unknown:
            raise DeviceURLError(f"unknown device setting {unknown[0]!r}", f"use only {', '.join(sorted(known))}")
        self.scheme, self.host, self.user, self.port = scheme, host, user, port   # a key of SCHEMES
        self.settings: dict[str, str] = {k: v for k, v in settings.items() if v is not None}

    @property
    def runner(self) -> str | None:
        """`python` or `native` (?runner=), as written; None: the device's own (device/link/runner_choice.py)."""
        return self.settings.get("runner")

    @property
    def python(self) -> str | None:
        return self.settings.get("python")

    @property
    def dir(self) -> str | None:
        return self.settings.get("dir")

    @property
    def key(self) -> str | None:
        return self.settings.get("key")

    @property
    def trust_host_key(self) -> str | None:
        return self.settings.get("trust_host_key")

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceURL) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"DeviceURL({self.text()!r})"

    def __str__(self) -> str:
        """Where, without the settings (a label): a scheme with no address is its name alone (`local`)."""
        if not self.host and not self.user:
            return self.scheme
        who = f"{self.user}@" if self.user else ""
        return f"{self.scheme}://{who}{self.host}" + (f":{self.port}" if self.port else "")

    def text(self, values: dict | None = None) -> str:
        """The whole URL, its query from `values` (by default its own settings): what parse_device_url reads back."""
        query = query_text(self.settings if values is None else values)
        base = f"{self.scheme}://" if not self.host and not self.user and query else str(self)
        return base + (f"?{query}" if query else "")


def url_values(values: dict) -> dict[str, str]:
    """The URL's settings among these, as the URL writes them, in the table's order; unset ones (and `auto`, off)
    left out."""
    return {s.name: "on" if v is True else str(v) for s in url_settings() if is_set(v := values.get(s.name))}


def query_text(values: dict) -> str:
    return urlencode(list(url_values(values).items()), safe="/~:")


def parse_device_url(url: str | DeviceURL | None) -> DeviceURL:
    if isinstance(url, DeviceURL):
        return url
    text = (url or "local").strip()
    name, question, query = text.partition("?")
    if name.rstrip(":/") in SCHEMES and SCHEMES[name.rstrip(":/")].address is no_address:
        text = f"{name.rstrip(':/')}://{question}{query}"       # `local`, `local?dir=…`: the scheme alone
    if "://" not in text:
        raise DeviceURLError(f"device {text!r} is not a device URL", url_fix())
    parts = urlsplit(text)
    settings, known = {}, [s.name for s in url_settings()]
    for key, values in parse_qs(parts.query, keep_blank_values=True).items():
        if key not in known:
            raise DeviceURLError(f"unknown device setting {key!r} in {text!r}", f"use only {', '.join(known)}")
        settings[key] = values[-1]
    scheme = SCHEMES.get(parts.scheme)
    if scheme is None:
        raise DeviceURLError(f"unknown device scheme {parts.scheme!r} in {text!r}", url_fix())
    return DeviceURL(parts.scheme, **scheme.address(parts, text), **settings)
