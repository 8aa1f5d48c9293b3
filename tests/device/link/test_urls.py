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


def test_the_transports_settings_are_typed_attributes_and_the_rest_is_the_querys_text():
    """The rows the runner does not take are the transport's (device/link/connect.py reads them off the URL); the
    URL keeps every setting's text in `settings`, and the target parses them (device/link/target.py)."""
    from device.spec.settings import SETTINGS

    u = parse_device_url("ssh://b?python=/usr/bin/python3&dir=/opt/w&key=/k&trust_host_key=SHA256:x&neuron_lib=/n.so")
    assert (u.python, u.dir, u.key, u.trust_host_key) == ("/usr/bin/python3", "/opt/w", "/k", "SHA256:x")
    assert u.settings["neuron_lib"] == "/n.so" and not hasattr(u, "neuron_lib")
    assert all(isinstance(getattr(DeviceURL, s.name, None), property) for s in SETTINGS if s.url and not s.runner)


def test_every_scheme_is_a_row_with_its_transport_class():
    from device.link.connect import transport_class
    from device.link.transport import Transport
    from device.link.urls import SCHEMES
    from device.spec.settings import KINDS

    assert set(KINDS) <= set(SCHEMES)           # the kinds the studio offers are schemes
    assert all(issubclass(transport_class(name), Transport) and hasattr(transport_class(name), "from_url")
               for name in SCHEMES)
