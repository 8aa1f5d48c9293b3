"""What the app remembers between launches, persisted with QSettings (stored as JSON values)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from core.decode.options import DecodeOptions, OptionsError
from device.link.profile import DeviceProfile

ORG, APP = "WhisperKV", "WhisperKV Studio"
MAX_RECENT = 10
DIAGNOSTICS_ONLY = ("suppress_eot",)      # options not restored at start-up


def default_options() -> DecodeOptions:
    """The studio is a debugging view: it asks for attention unless told not to (the heatmap, word times and
    click-to-play need it; a step costs a little more)."""
    return DecodeOptions(attention=True)


@dataclass
class AppSettings:
    options: DecodeOptions = field(default_factory=default_options)
    attention: bool = True        # the attention box as left: ticked stays ticked while the cache is off
    recent: list[str] = field(default_factory=list)
    profiles: list[DeviceProfile] = field(default_factory=lambda: [DeviceProfile()])
    profile: str = "Local runner"
    export_dir: str = ""          # where the last export or session was saved
    open_dir: str = ""            # the folder of the last audio opened
    geometry: QByteArray | None = None
    splitter: QByteArray | None = None

    def add_recent(self, path: str) -> None:
        self.recent = [path] + [p for p in self.recent if p != path]
        del self.recent[MAX_RECENT:]


def dialog_dir(folder: str) -> str:
    """Where a file dialog starts: the folder the user was in last, or the home folder (the first time, or when
    that folder is gone), never the working directory."""
    return folder if folder and Path(folder).is_dir() else str(Path.home())


def qsettings() -> QSettings:
    return QSettings(ORG, APP)


def _json(store: QSettings, key: str, default):
    raw = store.value(key)
    if raw in (None, ""):
        return default
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return default  # a hand-edited or older value: fall back rather than refuse to start


def load(store: QSettings) -> AppSettings:
    s = AppSettings()
    try:
        saved = _json(store, "run/options", {})
        attention = saved.get("attention", True) is True
        # A diagnostics trap (decoding past EOT) is asked for each session, never carried into the next one.
        s.options = DecodeOptions.from_dict(saved | dict.fromkeys(("attention", *DIAGNOSTICS_ONLY), False)
                                            ).with_attention(attention)
        s.attention = attention
    except (OptionsError, TypeError, AttributeError):
        pass  # a hand-edited value out of range: the defaults, rather than refusing to start
    s.recent = [p for p in _json(store, "audio/recent", []) if isinstance(p, str)]
    profiles = [DeviceProfile.from_dict(d) for d in _json(store, "device/profiles", []) if isinstance(d, dict)]
    s.profiles = profiles or [DeviceProfile()]
    s.profile = store.value("device/current", s.profiles[0].name) or s.profiles[0].name
    s.export_dir = store.value("export/dir", "") or ""
    s.open_dir = store.value("audio/dir", "") or ""
    s.geometry = store.value("window/geometry")
    s.splitter = store.value("window/splitter")
    return s


def save(store: QSettings, s: AppSettings) -> None:
    store.setValue("run/options", json.dumps(s.options.to_dict() | {"attention": s.attention}))
    store.setValue("audio/recent", json.dumps(s.recent))
    store.setValue("device/profiles", json.dumps([p.to_dict() for p in s.profiles]))
    store.setValue("device/current", s.profile)
    store.setValue("export/dir", s.export_dir)
    store.setValue("audio/dir", s.open_dir)
    if s.geometry is not None:
        store.setValue("window/geometry", s.geometry)
    if s.splitter is not None:
        store.setValue("window/splitter", s.splitter)
    store.sync()
