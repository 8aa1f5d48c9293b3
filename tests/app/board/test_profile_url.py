"""A device profile is a name, a device target and a QA floor, made from the device URL the CLI takes (what
`tools/board-in-a-box up` prints) and saved as that URL; a profile saved as fields before still loads."""
import pytest

from core.errors import WhisperKVError
from device.link.profile import DeviceProfile

BOX = "ssh://root@127.83.71.1:40123?python=/usr/bin/python3&key=/root/.cache/box/id_ed25519"


def test_an_ssh_url_fills_the_profile_a_user_would_and_gives_the_same_url_back():
    p = DeviceProfile.from_url(BOX, "board in a box")
    u = p.target.url
    assert (p.name, p.kind, u.user, u.host, u.port) == ("board in a box", "ssh", "root", "127.83.71.1", 40123)
    assert u.python == "/usr/bin/python3" and u.key == "/root/.cache/box/id_ed25519"
    assert p.target.backend == "auto" and p.url() == BOX
    assert DeviceProfile.from_url(BOX).name == "ssh://root@127.83.71.1:40123"      # the name is optional


def test_local_adb_and_a_backend():
    assert DeviceProfile.from_url("local?backend=numpy", "n").url() == "local://?backend=numpy"
    adb = DeviceProfile.from_url("adb://SER123?python=/usr/bin/python3&backend=tflite", "a")
    assert (adb.kind, adb.target.url.host, adb.target.backend) == ("adb", "SER123", "tflite")


def test_every_setting_the_cli_takes_is_a_profile_setting_neuron_lib_too():
    url = ("ssh://b?model=/opt/m&backend=dla&neuron_lib=/vendor/lib64/libneuron_runtime.so&neuron_api=v2"
           "&neuron_qos=off&npu_profile=on")
    p = DeviceProfile.from_url(url, "b")
    assert p.url() == url
    assert p.runner_target().runner_args() == [
        "--model", "/opt/m", "--backend", "dla", "--neuron-lib", "/vendor/lib64/libneuron_runtime.so",
        "--neuron-api", "v2", "--neuron-qos", "off", "--npu-profile"]


def test_a_bad_setting_is_refused_in_one_line():
    with pytest.raises(WhisperKVError, match="unknown neuron_api 'v3'"):
        DeviceProfile.from_url("ssh://b?neuron_api=v3", "b")
    with pytest.raises(WhisperKVError, match="`inprocess` has none"):
        DeviceProfile.from_url("inprocess")


def test_a_profile_saved_as_a_url_comes_back_whole():
    p = DeviceProfile.from_url("ssh://qa@board:2222?trust_host_key=SHA256:ab%2Bc/d%3D&npu_profile=on", "x",
                               min_tokens_per_s=12.5, require_npu=True)
    saved = p.to_dict()
    assert saved == {"name": "x", "url": p.url(), "min_tokens_per_s": 12.5, "require_npu": True}
    back = DeviceProfile.from_dict(saved)
    assert back == p and back.target.trust_host_key == "SHA256:ab+c/d=" and back.target.npu_profile is True


def test_a_profile_saved_by_the_studio_before_profiles_were_urls_still_loads():
    """The format the studio wrote until profiles became URLs: one field per setting (app/settings.py's JSON)."""
    old = {"name": "MT8371 board", "kind": "ssh", "host": "board.local", "user": "qa", "port": 2222,
           "key": "~/.ssh/id_board", "serial": "", "python": "/usr/bin/python3", "dir": "", "trust_host_key":
           "SHA256:abc", "backend": "tflite", "delegate": "/vendor/lib64/libneuron.so", "min_tokens_per_s": 20.0,
           "require_npu": True, "npu_profile": True}
    p = DeviceProfile.from_dict(old)
    assert p.name == "MT8371 board" and p.qa_floor() == {"min_tokens_per_s": 20.0, "require_npu": True}
    assert p.url() == ("ssh://qa@board.local:2222?python=/usr/bin/python3&key=~/.ssh/id_board&trust_host_key="
                       "SHA256:abc&backend=tflite&delegate=/vendor/lib64/libneuron.so&npu_profile=on")
    assert p.target.url.python == "/usr/bin/python3"         # what the transport reads
    assert p.runner_target().runner_args() == ["--backend", "tflite", "--delegate", "/vendor/lib64/libneuron.so",
                                               "--npu-profile"]
    assert p.target.trust_host_key == "SHA256:abc" and p.secret_key() == "ssh:qa@board.local:2222"
    local = DeviceProfile.from_dict({"name": "Local runner", "kind": "local", "host": "", "user": "", "port": 22,
                                     "backend": "auto", "delegate": ""})
    assert local.url() == "local" and local.qa_floor() == {"min_tokens_per_s": 0.0, "require_npu": False}
    adb = DeviceProfile.from_dict({"name": "a", "kind": "adb", "serial": "SER1", "python": "/usr/bin/python3"})
    assert adb.url() == "adb://SER1?python=/usr/bin/python3"
