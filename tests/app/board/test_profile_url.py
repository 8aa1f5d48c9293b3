"""A device profile from the device URL the CLI takes (what `tools/board-in-a-box up` prints), and back."""
import pytest

from app.board.profile import DeviceProfile
from device.link.urls import DeviceURLError

BOX = "ssh://root@127.83.71.1:40123?python=/usr/bin/python3&key=/root/.cache/box/id_ed25519"


def test_an_ssh_url_fills_the_profile_a_user_would_and_gives_the_same_url_back():
    p = DeviceProfile.from_url(BOX, "board in a box")
    assert (p.name, p.kind, p.user, p.host, p.port) == ("board in a box", "ssh", "root", "127.83.71.1", 40123)
    assert p.python == "/usr/bin/python3" and p.key == "/root/.cache/box/id_ed25519"
    assert p.backend == "auto" and p.url() == BOX


def test_local_adb_and_a_backend():
    assert DeviceProfile.from_url("local?backend=numpy", "n").url() == "local://?backend=numpy"
    adb = DeviceProfile.from_url("adb://SER123?python=/usr/bin/python3&backend=tflite", "a")
    assert (adb.kind, adb.serial, adb.host, adb.backend) == ("adb", "SER123", "", "tflite")


def test_settings_a_profile_cannot_hold_are_refused_not_dropped():
    with pytest.raises(DeviceURLError, match="no model setting"):
        DeviceProfile.from_url("ssh://b?model=~/m", "b")
