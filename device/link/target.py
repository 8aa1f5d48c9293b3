"""One device target: where the runner is and what it runs, parsed once from the CLI's arguments or a studio
device profile, and read whole by device/link/decoder.py::open_decoder."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import WhisperKVError
from device.link.urls import DeviceURL, parse_device_url

IN_PROCESS = "inprocess"      # no runner: this process loads the model and decodes
WORKLOADS = ("one-shot", "serve", "lean")   # the runner's --workload (device/runner/runtime_config.py)
PASSED = ("model", "backend", "delegate", "neuron_lib", "neuron_api", "neuron_qos")   # the runner takes as flags


class TargetError(WhisperKVError):
    code = "bad_target"


@dataclass(frozen=True)
class Target:
    """`url` None: in this process. `model`, `delegate` and `neuron_lib` are paths where the runner runs."""

    url: DeviceURL | None
    model: str | None = None
    backend: str = "auto"
    delegate: str | None = None
    neuron_lib: str | None = None
    neuron_api: str | None = None       # dla: v1|v2 (device/runner/runtime_config.py, NEURON_SETTINGS)
    neuron_qos: str | None = None       # dla: on|off
    workload: str = "lean"         # what the caller will ask: one-shot (transcribe), serve (stream, studio), lean
    trust_host_key: str | None = None
    npu_profile: bool = False      # the runner runs the Neuron runtime's profiler and sends its reports
    password: str | None = field(default=None, repr=False, compare=False)

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

    def runner_args(self) -> list[str]:
        """The runner's flags. --workload only for the local runner: it is always this checkout's, where a
        board's may predate the flag (an unknown flag would stop it)."""
        args = [arg for name in PASSED if (value := getattr(self, name)) not in (None, "", "auto")
                for arg in (f"--{name.replace('_', '-')}", value)]
        return (args + (["--npu-profile"] if self.npu_profile else [])
                + (["--workload", self.workload] if self.url is not None and self.url.scheme == "local" else []))


def parse_target(device: str | None = "local", *, model: str | None = None, backend: str | None = "auto",
                 delegate: str | None = None, neuron_api: str | None = None, neuron_qos: str | None = None,
                 workload: str = "lean", trust_host_key: str | None = None,
                 password: str | None = None, npu_profile: bool = False) -> Target:
    """The target for a --device URL (or `inprocess`) and the flags beside it. A setting given both as a flag and
    in the URL must agree. A backend for this PC is checked against this PC's registry now, before anything
    slow; a board's runner checks its own (its hello, device/link/decoder.py)."""
    if workload not in WORKLOADS:
        raise TargetError(f"unknown workload {workload!r}", "use one of: " + ", ".join(WORKLOADS))
    text = (device or "local").strip()
    url = None if text == IN_PROCESS else parse_device_url(text)
    if npu_profile and url is None:
        raise TargetError("--npu-profile needs a runner: the reports come from the runner's Neuron runtime",
                          "use --device local or a board's URL")
    flags = {"model": model, "backend": None if backend in (None, "", "auto") else backend, "delegate": delegate,
             "neuron_api": neuron_api, "neuron_qos": neuron_qos}
    merged = {}
    for name in PASSED:
        flag, setting = flags.get(name), getattr(url, name, None) if url else None
        if flag and setting and flag != setting:
            option = "--" + name.replace("_", "-")
            raise TargetError(f"{option} {flag} and the device URL's ?{name}={setting} disagree",
                              f"give {name} once: as {option} or in the URL")
        merged[name] = flag or setting
    check_choices(merged)
    target = Target(url, **{**merged, "backend": merged["backend"] or "auto"}, workload=workload,
                    trust_host_key=trust_host_key, npu_profile=npu_profile, password=password)
    if target.on_this_pc and target.backend != "auto":
        from device.runner.backends import resolve  # this PC's registry: the local runner is this checkout

        resolve(target.backend)
    return target



def check_choices(settings: dict) -> None:
    """The dla backend's settings with a fixed set of values (device/runner/runtime_config.py), checked here so
    that a bad one is one line before any runner starts."""
    from device.runner.runtime_config import NEURON_SETTINGS  # one table with the runner's flags; imports no backend

    for name, (choices, _) in NEURON_SETTINGS.items():
        value = settings.get(name)
        if value and value.lower() not in choices:
            raise TargetError(f"unknown {name} {value!r}", "use " + " or ".join(f"?{name}={c}" for c in choices))
        if value:
            settings[name] = value.lower()
