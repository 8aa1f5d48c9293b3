"""A saved way to reach a runner: a name, a device target (device/link/target.py) and what QA holds a clip to on it.
Saved as the target's device URL, the one the CLI takes (`profile.url()`); passwords never live here
(app/board/passwords.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import WhisperKVError
from device.link.target import Target, parse_target, value_of
from device.link.urls import DeviceURL, parse_device_url, url_settings
from device.spec.settings import is_set


@dataclass
class DeviceProfile:
    name: str = "Local runner"
    target: Target = field(default_factory=lambda: Target(DeviceURL("local")))
    min_tokens_per_s: float = 0.0   # QA on this device: the decoder's speed floor (0: none; core/qa/floor.py)
    require_npu: bool = False       # QA on this device: fail a clip whose graphs ran, wholly or in part, on the CPU

    @classmethod
    def from_url(cls, url: str, name: str = "", **qa) -> DeviceProfile:
        """The profile for a device URL (the one the CLI takes), named `name` or else by its address; a bad URL or
        setting is a WhisperKVError."""
        target = parse_target(url)
        if target.in_process:
            raise WhisperKVError("a device profile names a runner, and `inprocess` has none",
                                 "use local, ssh://user@host[:port] or adb://SERIAL")
        return cls(name=name or target.label, target=target, **qa)

    def url(self) -> str:
        """The device URL the CLI would take for this profile (without secrets)."""
        return self.target.text()

    @property
    def kind(self) -> str:
        return self.target.url.scheme

    def runner_target(self, password: str = "", workload: str = "serve") -> Target:
        """The device target this profile names, parsed (and so checked) as the CLI parses --device."""
        return parse_target(self.url(), workload=workload, password=password or None)

    def qa_floor(self) -> dict:
        """What QA holds a clip to on this device, beside its suite's own floor (core/qa/floor.py::device_floor)."""
        return {"min_tokens_per_s": float(self.min_tokens_per_s or 0.0), "require_npu": bool(self.require_npu)}

    def secret_key(self) -> str:
        """Where this profile's password is filed in the system keyring."""
        u = self.target.url
        return f"{u.scheme}:{u.user or ''}@{u.host}:{u.port or 22}"

    def to_dict(self) -> dict:
        return {"name": self.name, "url": self.url(), "min_tokens_per_s": self.min_tokens_per_s,
                "require_npu": self.require_npu}

    @classmethod
    def from_dict(cls, d: dict) -> DeviceProfile:
        """A saved profile: {"name", "url", the QA floor}, or a profile saved before profiles were URLs (fields).
        A setting that went bad (a backend this PC no longer has) loads as saved and says so when the profile is
        used, as a typed one does."""
        qa = {"min_tokens_per_s": float(d.get("min_tokens_per_s") or 0.0), "require_npu": bool(d.get("require_npu"))}
        if "url" not in d:
            return cls(str(d.get("name") or "Unsaved"), legacy_target(d), **qa)
        try:
            target = parse_target(d["url"])
        except WhisperKVError:
            url = parse_device_url(d["url"])
            target = Target(url, **saved_settings(url.settings))
        return cls(str(d.get("name") or target.label), target, **qa)


def saved_settings(saved: dict) -> dict:
    """The URL's settings among a saved profile's, parsed as the target's fields; one that no longer parses (a choice
    since removed) left out, so that the studio still starts."""
    settings = {}
    for s in url_settings():
        try:
            if is_set(value := value_of(s, saved.get(s.name), s.name)):
                settings[s.name] = value
        except WhisperKVError:
            pass
    return settings


def legacy_target(d: dict) -> Target:
    """The target of a profile saved as fields (kind, host, user, port, serial, and a field per URL setting)."""
    kind = d.get("kind") if d.get("kind") in ("local", "ssh", "adb") else "local"
    settings = saved_settings(d)
    port = int(d.get("port") or 22)
    if kind == "ssh":
        url = DeviceURL("ssh", str(d.get("host") or ""), str(d.get("user") or "") or None, None if port == 22 else port)
    else:
        url = DeviceURL(kind, str(d.get("serial") or "") if kind == "adb" else "")
    return Target(url, **settings)
