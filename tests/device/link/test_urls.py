import pytest

from device.link.urls import DeviceURL, DeviceURLError, parse_device_url


@pytest.mark.parametrize("text, expect", [
    ("local", DeviceURL("local")),
    (None, DeviceURL("local")),
    ("ssh://root@board:2222", DeviceURL("ssh", host="board", user="root", port=2222)),
    ("ssh://mt8371", DeviceURL("ssh", host="mt8371")),
    ("ssh://me@10.0.0.5?python=/usr/bin/python3&dir=/opt/wkv",
     DeviceURL("ssh", host="10.0.0.5", user="me", python="/usr/bin/python3", dir="/opt/wkv")),
    ("adb://0123456789ABCDEF", DeviceURL("adb", host="0123456789ABCDEF")),
    ("adb://192.168.1.9:5555?backend=onnx", DeviceURL("adb", host="192.168.1.9:5555", backend="onnx")),
    ("local://?dir=~/whisperkv", DeviceURL("local", dir="~/whisperkv")),
    ("local?python=/usr/bin/python3", DeviceURL("local", python="/usr/bin/python3")),
    ("ssh://root@board?backend=tflite&delegate=/usr/lib/libneuron_stable_delegate.so",
     DeviceURL("ssh", host="board", user="root", backend="tflite", delegate="/usr/lib/libneuron_stable_delegate.so")),
])
def test_parse(text, expect):
    assert parse_device_url(text) == expect


@pytest.mark.parametrize("text, words", [
    ("board", "not a device URL"),
    ("ftp://x", "unknown device scheme"),
    ("ssh://host:99999", "bad port"),
    ("ssh://host?colour=red", "unknown device setting"),
    ("adb://", "no device serial"),
])
def test_bad_urls_name_the_problem_and_the_fix(text, words):
    with pytest.raises(DeviceURLError) as err:
        parse_device_url(text)
    assert words in str(err.value) and err.value.fix


def test_str_is_the_url_without_settings():
    assert str(parse_device_url("ssh://root@h:22?python=/x")) == "ssh://root@h:22"


def test_a_workload_maps_to_one_runtime_configuration():
    """One place decides what a workload means: a one-shot run spins, a served one keeps its buffers, lean neither."""
    from device.spec.runtime_config import WORKLOADS, RuntimeConfig

    assert [(RuntimeConfig.for_workload(w).spin, RuntimeConfig.for_workload(w).arena) for w in WORKLOADS] == [
        (False, False), (True, False), (False, True)]
    assert WORKLOADS == ("lean", "one-shot", "serve")
