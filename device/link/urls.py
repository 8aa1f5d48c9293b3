"""Device URLs: `local`, `ssh://[user@]host[:port]` and `adb://SERIAL`, with optional query settings.

Query settings: `python` (remote interpreter, e.g. /usr/bin/python3), `dir` (runner directory),
`key` (SSH identity file), `backend`, `model` and `delegate` (passed to the runner: `delegate` is the
path on the device of a TFLite external delegate; Genio IoT Yocto's stable delegate is not one), `neuron_lib`
(the dla backend: the path on the device of MediaTek's Neuron runtime library), `neuron_api` (v1|v2) and
`neuron_qos` (on|off) (the dla backend's choices: device/runner/runtime_config.py's NEURON_SETTINGS).
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from core.errors import WhisperKVError

SETTINGS = ("python", "dir", "key", "backend", "model", "delegate", "neuron_lib", "neuron_api", "neuron_qos")
URL_FIX = "use local, ssh://user@host[:port] or adb://SERIAL (settings: ?python=/usr/bin/python3&dir=~/whisperkv)"


class DeviceURLError(WhisperKVError):
    code = "bad_device_url"


@dataclass
class DeviceURL:
    scheme: str                  # local | ssh | adb
    host: str = ""               # ssh host or ~/.ssh/config alias; adb serial
    user: str | None = None
    port: int | None = None
    python: str | None = None
    dir: str | None = None
    key: str | None = None
    backend: str | None = None
    model: str | None = None
    delegate: str | None = None
    neuron_lib: str | None = None
    neuron_api: str | None = None
    neuron_qos: str | None = None

    def __str__(self) -> str:
        if self.scheme == "local":
            return "local"
        if self.scheme == "adb":
            return f"adb://{self.host}"
        who = f"{self.user}@" if self.user else ""
        return f"ssh://{who}{self.host}" + (f":{self.port}" if self.port else "")


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
    settings = {}
    for name, values in parse_qs(parts.query, keep_blank_values=True).items():
        if name not in SETTINGS:
            raise DeviceURLError(f"unknown device setting {name!r} in {text!r}",
                                 f"use only {', '.join(SETTINGS)}")
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
