import platform
import sys

from device.link.adb import AdbTransport
from device.link.info import FIELDS, device_info, format_info
from device.link.local import LocalTransport


def test_local_device_info_reports_every_field():
    info = device_info(LocalTransport())
    assert list(info) == list(FIELDS)
    assert info["device"] == "local" and info["python"] == platform.python_version()
    assert info["numpy"] and info["mem_total_mb"] > 0 and info["runner_version"]
    assert info["model"]                      # the installed wheels
    text = format_info(info)
    assert "python" in text and ("absent" in text) == (None in info.values() or not info["npu"])


def test_device_without_python_still_reports_and_says_absent(stand_in_adb, tmp_path):
    info = device_info(AdbTransport("STANDIN01", python="/nonexistent/python3"), dir=str(tmp_path))
    assert info["python"] is None and info["os"] and info["mem_total_mb"] > 0
    assert info["npu"] == [] and info["runner_version"] is None
    lines = dict(line.split(None, 1) for line in format_info(info).splitlines())
    assert lines["python"] == "absent" and lines["npu"] == "absent" and lines["model"] == "absent"


def test_undeployed_directory_reports_runner_and_model_absent(stand_in_adb, tmp_path):
    info = device_info(AdbTransport("STANDIN01", python=sys.executable), dir=str(tmp_path / "empty"))
    assert info["python"] == platform.python_version()
    assert info["runner_version"] is None and info["model_sha256"] is None
