"""One target per device (device/link/target.py): parsed once from a device URL and the flags beside it."""
import pytest

from core.errors import WhisperKVError
from device.link.target import TargetError, parse_target


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
    from core.errors import WhisperKVError

    assert parse_target("ssh://b", backend="no-such-backend").backend == "no-such-backend"
    for device in ("local", "inprocess"):
        with pytest.raises(WhisperKVError, match="unknown backend 'no-such-backend'"):
            parse_target(device, backend="no-such-backend")
    assert parse_target("inprocess").in_process and parse_target("inprocess").label == "in-process"
