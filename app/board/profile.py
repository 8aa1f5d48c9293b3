"""A saved way to reach a runner: Local, SSH or ADB. Passwords never live here (see passwords.py)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from urllib.parse import urlencode

from device.link.target import Target, parse_target
from device.link.urls import DeviceURLError, parse_device_url

KINDS = ("local", "ssh", "adb")


@dataclass
class DeviceProfile:
    name: str = "Local runner"
    kind: str = "local"          # local | ssh | adb
    host: str = ""               # ssh host or ~/.ssh/config alias
    user: str = ""
    port: int = 22
    key: str = ""                # ssh identity file
    serial: str = ""             # adb serial
    python: str = ""             # remote interpreter, e.g. /usr/bin/python3 (empty: the transport's default)
    dir: str = ""                # runner directory on the device (empty: the transport's default)
    trust_host_key: str = ""     # SHA256:… fingerprint the user chose to trust
    backend: str = "auto"        # the runner's backend: auto, or a name in device/runner/backends.py
    delegate: str = ""           # tflite: a delegate library on the device (the Neuron delegate on a MediaTek board)
    min_tokens_per_s: float = 0.0   # QA on this device: the decoder's speed floor (0: none; core/qa/floor.py)
    require_npu: bool = False       # QA on this device: fail a clip whose graphs ran, wholly or in part, on the CPU
    npu_profile: bool = False       # the runner runs the Neuron runtime's profiler; each run keeps its per-op times

    def url(self) -> str:
        """The device URL the CLI would take for this profile (without secrets)."""
        settings = (("python", self.python), ("dir", self.dir), ("key", self.key),
                    ("backend", "" if self.backend == "auto" else self.backend), ("delegate", self.delegate))
        query = urlencode([(k, v) for k, v in settings if v], safe="/~:")
        if self.kind == "ssh":
            who = f"{self.user}@" if self.user else ""
            port = f":{self.port}" if self.port and self.port != 22 else ""
            base = f"ssh://{who}{self.host}{port}"
        elif self.kind == "adb":
            base = f"adb://{self.serial}"
        else:
            base = "local" if not query else "local://"
        return base + (f"?{query}" if query else "")

    def target(self, password: str = "", workload: str = "serve") -> Target:
        """The device target this profile names (device/link/target.py), parsed as the CLI parses --device."""
        return parse_target(self.url(), workload=workload, trust_host_key=self.trust_host_key or None,
                            password=password or None, npu_profile=self.npu_profile)

    @classmethod
    def from_url(cls, url: str, name: str) -> DeviceProfile:
        """The profile a user would fill in for a device URL (the one the CLI takes); DeviceURLError if bad."""
        u = parse_device_url(url)
        extra = [k for k in ("model", "neuron_lib", "neuron_api", "neuron_qos") if getattr(u, k)]
        if extra:
            raise DeviceURLError(f"a device profile has no {' or '.join(extra)} setting ({url!r})",
                                 f"drop ?{'&'.join(extra)}= from the URL; the runner then uses its deployed model")
        kind = "adb" if u.scheme == "adb" else "ssh" if u.scheme == "ssh" else "local"
        return cls(name=name, kind=kind, host=u.host if kind == "ssh" else "", user=u.user or "",
                   port=u.port or 22, key=u.key or "", serial=u.host if kind == "adb" else "",
                   python=u.python or "", dir=u.dir or "", backend=u.backend or "auto", delegate=u.delegate or "")

    def qa_floor(self) -> dict:
        """What QA holds a clip to on this device, beside its suite's own floor (core/qa/floor.py::device_floor)."""
        return {"min_tokens_per_s": float(self.min_tokens_per_s or 0.0), "require_npu": bool(self.require_npu)}

    def secret_key(self) -> str:
        """Where this profile's password is filed in the system keyring."""
        return f"{self.kind}:{self.user}@{self.host}:{self.port}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "DeviceProfile":
        names = cls.__dataclass_fields__
        kw = {k: v for k, v in d.items() if k in names}
        if "port" in kw:
            kw["port"] = int(kw["port"] or 22)
        if "min_tokens_per_s" in kw:
            kw["min_tokens_per_s"] = float(kw["min_tokens_per_s"] or 0.0)
        return cls(**kw)
