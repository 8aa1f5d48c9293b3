"""A device target's settings are one table (device/spec/settings.py): a setting added as one row and its typed field
of Target reaches the runner from the CLI's flag, from the device URL and from a studio profile
(tests/app/board/test_setting_fields.py adds the same row, with its words, to the device panel); a row that names a
RuntimeConfig field is a keyword of runtime_config."""
from __future__ import annotations

from dataclasses import dataclass, fields
from types import SimpleNamespace

import pytest

import device.link.profile
import device.link.target
from device.link.profile import DeviceProfile
from device.link.target import Target, TargetError, parse_target
from device.runner.serve.agent import parser as runner_parser
from device.spec.runtime_config import WORKLOADS, RuntimeConfig
from device.spec.settings import KINDS, SETTINGS, Setting, runtime_config

TOY = Setting("toy_threads", "compute threads for a toy", metavar="N", studio=KINDS)


@dataclass(frozen=True)
class ToyTarget(Target):
    """The row's typed field of Target (device/link/target.py), as the recipe writes it there."""

    toy_threads: str | None = None


@pytest.fixture
def toy_row(monkeypatch):
    """One row and its field, the only edits: the code that uses a setting reads it by name."""
    monkeypatch.setattr(device.link.target, "Target", ToyTarget)
    monkeypatch.setattr(device.link.profile, "Target", ToyTarget)
    SETTINGS.append(TOY)
    yield TOY
    SETTINGS.remove(TOY)


def runner_config(args: list[str]) -> RuntimeConfig:
    """What the runner makes of its arguments: its parsed flags mapped to its RuntimeConfig."""
    return runtime_config(runner_parser().parse_args(args))


def test_a_new_row_reaches_the_runner_from_the_cli(toy_row):
    from cli.device_cmds import target_from_args
    from cli.main import build_parser

    for command in (["transcribe", "clip.wav"], ["stream", "clip.wav"], ["qa", "suite.toml"]):
        args = build_parser().parse_args([*command, "--toy-threads", "3", "--device", "ssh://board"])
        runner_args = target_from_args(args, device="ssh://board").runner_args()
        assert runner_args == ["--toy-threads", "3"], command
        assert runner_parser().parse_args(runner_args).toy_threads == "3"


def test_a_new_row_reaches_the_runner_from_the_url_and_a_profile(toy_row):
    target = parse_target("adb://SER?toy_threads=3&backend=dla")
    assert target.toy_threads == "3" and target.runner_args() == ["--backend", "dla", "--toy-threads", "3"]
    profile = DeviceProfile.from_url("adb://SER?toy_threads=3", "board")
    assert DeviceProfile.from_dict(profile.to_dict()).runner_target().runner_args() == ["--toy-threads", "3"]
    with pytest.raises(TargetError, match="--toy-threads 4 and the device URL's \\?toy_threads=3 disagree"):
        parse_target("adb://SER?toy_threads=3", toy_threads="4")


def unmapped_config_rows() -> list[str]:
    """The rows naming a RuntimeConfig field that runtime_config leaves as it is, whatever the row's value."""
    defaults = {s.name: s.default for s in SETTINGS}
    unmapped = []
    for s in (s for s in SETTINGS if s.config):
        before = getattr(runtime_config(SimpleNamespace(**defaults)), s.config)
        if all(getattr(runtime_config(SimpleNamespace(**defaults | {s.name: value})), s.config) == before
               for value in s.choices or ("/x.so", "3")):
            unmapped.append(s.name)
    return unmapped


def test_every_row_with_a_config_field_is_a_keyword_of_runtime_config():
    assert {s.config for s in SETTINGS if s.config} <= {f.name for f in fields(RuntimeConfig)}
    assert unmapped_config_rows() == []


def test_a_row_naming_a_config_field_without_its_keyword_in_runtime_config_is_caught():
    SETTINGS.append(Setting("toy_threads", "compute threads for a toy", metavar="N", config="threads"))
    try:
        assert unmapped_config_rows() == ["toy_threads"]
    finally:
        SETTINGS.pop()


def test_without_the_row_the_setting_is_unknown_everywhere():
    from core.errors import WhisperKVError

    with pytest.raises(WhisperKVError, match="unknown device setting 'toy_threads'"):
        parse_target("adb://SER?toy_threads=3")
    with pytest.raises(SystemExit):
        runner_parser().parse_args(["--toy-threads", "3"])


def test_the_runners_flags_and_config_are_the_tables():
    args = runner_parser().parse_args(["--neuron-lib", "/x.so", "--neuron-api", "v2", "--neuron-qos", "off",
                                       "--workload", "serve", "--npu-profile"])
    config = runtime_config(args)
    assert (config.neuron_lib, config.neuron_api, config.neuron_qos, config.arena) == ("/x.so", "v2", False, True)
    assert runtime_config(parse_target("local", workload="one-shot")) == RuntimeConfig.for_workload("one-shot")
    assert next(s for s in SETTINGS if s.name == "workload").choices == WORKLOADS


def test_the_cli_takes_every_runner_setting_the_url_takes_in_every_runner_subcommand():
    """qa lacked --delegate and --neuron-*; every runner subcommand now declares the table's flags."""
    from cli.main import build_parser

    given = {s.name: (s.choices or ("x",))[-1] for s in SETTINGS if s.cli}
    for command in ("transcribe", "stream", "qa"):
        argv = [command, "x", *(arg for name, value in given.items() for arg in ("--" + name.replace("_", "-"), value))]
        args = build_parser(command).parse_args(argv)
        assert {name: getattr(args, name) for name in given} == given, command
