"""One device target: where the runner is and what it runs, parsed once from the CLI's arguments, a device URL or a
studio device profile, and read whole by device/link/decoder.py::open_decoder. Its settings are typed fields, one a
row of device/spec/settings.py (tests/device/link/test_target.py holds the names and defaults to the rows);
`runner_args` and the URL's query read the rows."""
from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Literal

from core.errors import WhisperKVError
from device.link.urls import DeviceURL, parse_device_url, url_values
from device.spec.backend_rows import ROWS
from device.spec.settings import OFF, ON, SETTINGS, Setting, is_set, setting

IN_PROCESS = "inprocess"      # no runner: this process loads the model and decodes


class TargetError(WhisperKVError):
    code = "bad_target"


@dataclass(frozen=True)
class Target:
    """`url` None: in this process. `model`, `delegate` and `neuron_lib` are paths where the runner runs;
    `workload` is what the caller will ask: one-shot (transcribe), serve (stream, studio), lean."""

    url: DeviceURL | None
    _: KW_ONLY
    # the transport's (device/link/connect.py)
    runner: Literal["python", "native"] | None = None
    python: str | None = None
    dir: str | None = None
    key: str | None = None
    trust_host_key: str | None = None
    # the runner's
    model: str | None = None
    backend: str = "auto"
    delegate: str | None = None
    neuron_lib: str | None = None
    neuron_api: Literal["v1", "v2"] | None = None
    neuron_qos: Literal["on", "off"] | None = None
    neuron_io: Literal["native", "converted"] | None = None
    neuron_create: Literal["plain", "options"] | None = None
    npu_profile: bool = False
    workload: Literal["lean", "one-shot", "serve"] = "lean"
    password: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        # the URL carries the URL's settings the target holds, so that a transport reading it (device/link/connect.py)
        # and the target agree however the target was made (parsed, or a studio form's fields)
        if self.url is not None:
            u = self.url
            object.__setattr__(self, "url", DeviceURL(u.scheme, u.host, u.user, u.port,
                                                      **url_values(self.setting_values())))

    def setting_values(self) -> dict:
        """The settings by name, in the table's order: what the URL's query and the runner's flags are written from."""
        return {s.name: getattr(self, s.name) for s in SETTINGS}

    @property
    def in_process(self) -> bool:
        return self.url is None

    @property
    def on_this_pc(self) -> bool:
        """The decoder runs on this PC (in this process or the local runner): the PC's backends are its backends."""
        return self.url is None or self.url.scheme == "local"

    @property
    def label(self) -> str:
        return "in-process" if self.url is None else str(self.url)

    def text(self) -> str:
        """The device URL that names this target whole (without its password): what parse_target reads back."""
        return IN_PROCESS if self.url is None else self.url.text(self.setting_values())

    def with_values(self, **values) -> Target:
        return replace(self, **values)

    def runner_args(self) -> list[str]:
        """The runner's flags, in the table's order. A `local_only` setting (--workload) only for the local runner:
        it is always this checkout's, where a board's may predate the flag (an unknown flag would stop it)."""
        local = self.url is not None and self.url.scheme == "local"
        args = []
        for name, value in self.setting_values().items():
            s = setting(name)
            if s.runner and is_set(value) and (local or not s.local_only):
                args += [s.flag] if value is True else [s.flag, str(value)]
        return args


def parse_target(device: str | None = "local", *, workload: str = "lean", password: str | None = None,
                 backend_here: bool = True, **flags) -> Target:
    """The target for a --device URL (or `inprocess`) and the settings given beside it (by their names in
    device/spec/settings.py: the CLI's flags, a front end's choices). A setting given both as a flag and in the URL
    must agree. A backend for this PC is checked against the spec's backend rows now, before anything slow (unless
    `backend_here` is False: a saved profile loads as saved); a runner refuses what it cannot run in its hello."""
    text = (device or "local").strip()
    url = None if text == IN_PROCESS else parse_device_url(text)
    unknown = [name for name in flags if setting(name) is None]
    if unknown:
        raise TypeError(f"parse_target() got an unknown setting {unknown[0]!r}")
    values = {}
    for s in SETTINGS:
        flag = value_of(s, flags.get(s.name, workload if s.name == "workload" else None), s.flag)
        given = value_of(s, url.settings.get(s.name) if url is not None and s.url else None, f"?{s.name}=")
        if is_set(flag) and is_set(given) and flag != given:
            raise TargetError(f"{s.flag} {flag} and the device URL's ?{s.name}={given} disagree",
                              f"give {s.name} once: as {s.flag} or in the URL")
        value = flag if is_set(flag) else given
        if value not in (None, ""):
            values[s.name] = value
    target = Target(url, **values, password=password)
    if target.npu_profile and url is None:
        raise TargetError("--npu-profile needs a runner: the reports come from the runner's Neuron runtime",
                          "use --device local or a board's URL")
    if target.runner and url is None:
        raise TargetError(f"--runner {target.runner} names a runner, and `inprocess` runs none: the model decodes in "
                          "this process", "use --device local or a board's URL")
    if backend_here and target.on_this_pc and target.backend != "auto":
        check_backend_here(target.backend)      # the local runner is this checkout: its rows are the spec's
    return target


def check_backend_here(name: str) -> None:
    """A backend this PC has: a row of the spec whose modules and CPU this machine has (a backend's own probe,
    such as native-int8b's compiler, is the runner's to run when it starts)."""
    row = ROWS.get(name)
    if row is None:
        raise TargetError(f"unknown backend {name!r}", f"use auto or one of: {', '.join(ROWS)}")
    lacks = row.lacks()
    if lacks:
        raise TargetError(*lacks)


def value_of(s: Setting, value, where: str):
    """A setting's value checked against its row: a choice one of its choices (any case), a flag on or off."""
    if value is None or value == "" or s.kind == "text":
        return value
    if s.kind == "flag":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ON + OFF:
            return str(value).lower() in ON
        raise TargetError(f"{where}{value} is neither on nor off", f"use ?{s.name}=on or leave it out")
    if str(value).lower() not in s.choices:
        fix = (" or ".join(f"?{s.name}={c}" for c in s.choices) if s.url
               else "one of: " + ", ".join(s.choices))
        raise TargetError(f"unknown {s.name} {value!r}", "use " + fix)
    return str(value).lower()
