"""One target per device (device/link/target.py): parsed once from a device URL and the flags beside it, into typed
fields that are the settings table's rows."""
import subprocess
import sys
from dataclasses import fields
from typing import Literal, get_type_hints

import pytest

from core.errors import WhisperKVError
from device import ROOT
from device.link.target import Target, TargetError, parse_target
from device.link.urls import DeviceURL
from device.spec.backend_rows import ROWS, BackendRow
from device.spec.settings import SETTINGS


def test_runner_args_carry_backend_model_delegate_and_neuron_lib():
    assert parse_target("ssh://b").runner_args() == []
    assert parse_target("ssh://b?delegate=/usr/lib/libneuron_stable_delegate.so&backend=tflite&model=/opt/m"
                        ).runner_args() == ["--model", "/opt/m", "--backend", "tflite", "--delegate",
                                            "/usr/lib/libneuron_stable_delegate.so"]
    assert parse_target("adb://s?backend=dla&neuron_lib=/vendor/lib64/libneuron_runtime.so").runner_args() == [
        "--backend", "dla", "--neuron-lib", "/vendor/lib64/libneuron_runtime.so"]



def test_neuron_api_and_qos_reach_the_runner_from_the_url_or_the_flag_and_a_bad_value_is_one_line():
    assert parse_target("ssh://b?backend=dla&neuron_api=V2&neuron_qos=off").runner_args() == [
        "--backend", "dla", "--neuron-api", "v2", "--neuron-qos", "off"]
    assert parse_target("ssh://b", neuron_api="v1").runner_args() == ["--neuron-api", "v1"]
    with pytest.raises(TargetError, match="--neuron-api v1 and the device URL's \\?neuron_api=v2 disagree"):
        parse_target("ssh://b?neuron_api=v2", neuron_api="v1")
    with pytest.raises(TargetError, match="unknown neuron_api 'v3' — use \\?neuron_api=v1 or \\?neuron_api=v2"):
        parse_target("ssh://b?neuron_api=v3")


def test_only_a_local_runner_is_told_its_workload():
    """A board's runner may predate --workload (an unknown flag would stop it); this checkout's never does."""
    assert parse_target("local", workload="serve").runner_args() == ["--workload", "serve"]
    assert parse_target("local?backend=onnx", workload="one-shot").runner_args() == [
        "--backend", "onnx", "--workload", "one-shot"]
    assert parse_target("ssh://root@board", workload="serve").runner_args() == []
    assert parse_target("adb://serial", workload="one-shot").runner_args() == []


def test_a_flag_and_a_url_setting_that_disagree_are_one_error():
    assert parse_target("ssh://b?backend=tflite", backend="tflite").backend == "tflite"    # the same: fine
    assert parse_target("ssh://b?model=/opt/m", backend="tflite").runner_args() == [
        "--model", "/opt/m", "--backend", "tflite"]
    with pytest.raises(TargetError, match=r"--backend onnx and the device URL's \?backend=tflite disagree"):
        parse_target("ssh://b?backend=tflite", backend="onnx")
    with pytest.raises(TargetError, match="unknown workload"):
        parse_target("local", workload="fast")


def test_a_board_backend_is_left_to_the_board_and_a_local_one_checked_here():
    """The PC's registry judges only a runner on this PC; a board's runner answers for its own (its hello)."""
    assert parse_target("ssh://b", backend="no-such-backend").backend == "no-such-backend"
    for device in ("local", "inprocess"):
        with pytest.raises(WhisperKVError, match="unknown backend 'no-such-backend'"):
            parse_target(device, backend="no-such-backend")
    assert parse_target("inprocess").in_process and parse_target("inprocess").label == "in-process"


def test_the_targets_typed_fields_are_the_settings_rows():
    """One field per row, in the table's order, with the row's default and a type the row's kind says: a flag a
    bool, a choice a Literal of its choices, a text a str (None where the row has no default)."""
    rows = {s.name: s for s in SETTINGS}
    own = [f for f in fields(Target) if f.name not in ("url", "password")]
    assert [f.name for f in own] == list(rows)
    assert {f.name: f.default for f in own} == {name: s.default for name, s in rows.items()}
    hints = get_type_hints(Target)
    for name, s in rows.items():
        kind = bool if s.kind == "flag" else Literal[s.choices] if s.kind == "choice" else str
        assert hints[name] == (kind if s.default is not None else kind | None), name


def test_values_are_parsed_once_into_their_types():
    t = parse_target("ssh://b?npu_profile=on&neuron_api=V2&neuron_qos=off", workload="serve")
    assert (t.npu_profile, t.neuron_api, t.neuron_qos, t.workload) == (True, "v2", "off", "serve")
    assert t.url.settings == {"neuron_api": "v2", "neuron_qos": "off", "npu_profile": "on"}
    assert t.with_values(neuron_api="v1").text() == "ssh://b?neuron_api=v1&neuron_qos=off&npu_profile=on"
    assert not hasattr(Target, "__getattr__") and not hasattr(DeviceURL, "__getattr__")


def test_a_backend_for_this_pc_is_checked_against_the_spec_rows_without_the_runner(monkeypatch):
    """The spec's rows say what a backend needs (modules, CPU); the local runner's hello still refuses what its
    own probe finds missing. Parsing a target loads nothing of the runner."""
    monkeypatch.setitem(ROWS, "toy", BackendRow("toy", "a toy", needs=("no_such_module_here",), needs_fix="pip it"))
    with pytest.raises(TargetError, match="backend 'toy' needs no_such_module_here") as err:
        parse_target("local", backend="toy")
    assert err.value.fix == "pip it"
    assert parse_target("ssh://b", backend="toy").backend == "toy"       # a board's runner answers for its own
    code = ("import sys; from device.link.target import parse_target; parse_target('local', backend='onnx'); "
            "print(sorted(m for m in sys.modules if m.startswith('device.runner')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip() == "[]"


def test_the_runner_is_a_setting_of_the_url_and_the_cli_and_never_a_flag_of_the_runner():
    """?runner=native / --runner native chooses which runner the transport starts; neither runner takes it."""
    from cli.device_cmds import target_from_args
    from cli.main import build_parser

    t = parse_target("ssh://b?runner=Native&backend=dla")
    assert t.runner == "native" and t.url.runner == "native" and t.runner_args() == ["--backend", "dla"]
    assert parse_target("ssh://b").runner is None and parse_target("ssh://b").url.runner is None
    args = build_parser().parse_args(["transcribe", "clip.wav", "--runner", "native", "--device", "local"])
    assert target_from_args(args).text() == "local://?runner=native"
    deploy = build_parser().parse_args(["deploy", "--runner", "native", "--device", "ssh://b"])
    assert target_from_args(deploy, runner=False).runner == "native"
    with pytest.raises(TargetError, match="unknown runner 'c' — use \\?runner=python or \\?runner=native"):
        parse_target("ssh://b?runner=c")
    with pytest.raises(TargetError, match="`inprocess` runs none: .* — use --device local or a board's URL"):
        parse_target("inprocess", runner="native")
