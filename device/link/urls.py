"""Device URLs: `local`, `ssh://[user@]host[:port]` and `adb://SERIAL`, with optional query settings.

The query's keys are the rows of device/spec/settings.py that the URL takes, e.g.
`ssh://root@board?python=/usr/bin/python3&backend=dla&neuron_lib=PATH`; the URL keeps their text, the target
(device/link/target.py) checks their values.
"""
from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from core.errors import WhisperKVError
from device.spec.settings import SETTINGS, Setting, is_set, setting

URL_FIX = "use local, ssh://user@host[:port] or adb://SERIAL (settings: ?python=/usr/bin/python3&dir=~/whisperkv)"


class DeviceURLError(WhisperKVError):
    code = "bad_device_url"


def url_settings() -> list[Setting]:
    return [s for s in SETTINGS if s.url]


class DeviceURL:
    """Where a runner is (`scheme`, `host`: an ssh host or ~/.ssh/config alias, or an adb serial; `user`, `port`)
    and the URL's query settings by name (`url.python`, …; None when the URL does not name one)."""

    def __init__(self, scheme: str, host: str = "", user: str | None = None, port: int | None = None, **settings):
        known = {s.name for s in url_settings()}
        unknown = [name for name in settings if name not in known]
        if unknown:
            raise DeviceURLError(f"unknown device setting {unknown[0]!r}", f"use only {', '.join(sorted(known))}")
        self.scheme, self.host, self.user, self.port = scheme, host, user, port   # local | ssh | adb
        self.settings = {k: v for k, v in settings.items() if v is not None}

    def __getattr__(self, name: str):
        if name.startswith("_") or name == "settings":
            raise AttributeError(name)
        row = setting(name)
        if row is None or not row.url:
            raise AttributeError(name)
        return self.settings.get(name)

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceURL) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"DeviceURL({self.text()!r})"

    def __str__(self) -> str:
        """Where, without the settings (a label)."""
        if self.scheme == "local":
            return "local"
        if self.scheme == "adb":
            return f"adb://{self.host}"
        who = f"{self.user}@" if self.user else ""
        return f"ssh://{who}{self.host}" + (f":{self.port}" if self.port else "")

    def text(self, values: dict | None = None) -> str:
        """The whole URL, its query from `values` (by default its own settings): what parse_device_url reads back."""
        query = query_text(self.settings if values is None else values)
        base = "local://" if self.scheme == "local" and query else str(self)
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
    if text in ("local", "local://"):
        return DeviceURL("local")
    if text.startswith("local?"):
        text = "local://" + text[len("local"):]
    if "://" not in text:
        raise DeviceURLError(f"device {text!r} is not a device URL", URL_FIX)
    parts = urlsplit(text)
    settings, known = {}, [s.name for s in url_settings()]
    for name, values in parse_qs(parts.query, keep_blank_values=True).items():
        if name not in known:
            raise DeviceURLError(f"unknown device setting {name!r} in {text!r}", f"use only {', '.join(known)}")
        settings[name] = values[-1]
    if parts.scheme == "local":
        return DeviceURL("local", **settings)
    if parts.scheme == "adb":
        serial = unquote(parts.netloc or parts.path.lstrip("/"))
        if not serial:
            raise DeviceURLError(f"{text!r} names no device serial", "use adb://SERIAL (see `adb devices -l`)")
        return DeviceURL("adb", host=serial, **settings)
    if parts.scheme == "ssh":
        try:
            port = parts.port
        except ValueError:
            raise DeviceURLError(f"bad port in {text!r}", "use ssh://user@host:PORT with a number 1-65535") from None
        if not parts.hostname:
            raise DeviceURLError(f"{text!r} names no host", URL_FIX)
        return DeviceURL("ssh", host=parts.hostname, user=unquote(parts.username) if parts.username else None,
                         port=port, **settings)
    raise DeviceURLError(f"unknown device scheme {parts.scheme!r} in {text!r}", URL_FIX)
