"""The link to an Android board (device/link/android.py) through the STAND-IN adb (tests/device/link_helpers.py) and a
STAND-IN getprop: no Android device exists here. Android is asked once a transport; without ?dir= the runner's folder
is /data/local/tmp/whisperkv; the native runner starts with the vendor folders' LD_LIBRARY_PATH, known from deploy's
record without asking getprop again."""
from __future__ import annotations

import json
import stat
import sys

from device import ROOT
from device.link.adb import AdbTransport
from device.link.android import LIBRARY_PATH, RUNNER_DIR, is_android, os_name, release
from device.link.connect import open_transport
from device.link.runner_choice import NATIVE_EXE
from tests.device.link.test_adb import calls
from tests.device.link.test_runner_choice import PYTHON_ONLY, refused_hello
from tests.device.link_helpers import stand_in_android

# A STAND-IN for the native runner, written by the tests: it answers hello with model_missing naming its argv and the
# LD_LIBRARY_PATH it was started with.
FAKE_RUNNER = '''#!{python}
import json, os, sys
sys.path.insert(0, {root!r})
from device import protocol as P
parser, out = P.FrameParser(max_payload=0), os.fdopen(1, "wb", 0)
while data := os.read(0, 65536):
    for frame in parser.feed(data):
        said = {{"argv": sys.argv[1:], "ld": os.environ.get("LD_LIBRARY_PATH")}}
        out.write(P.encode_frame({{"type": "error", "code": "model_missing", "message": json.dumps(said)}}))
'''


def board_with(folder, record: dict | None):
    exe = folder / NATIVE_EXE
    exe.parent.mkdir(parents=True)
    exe.write_text(FAKE_RUNNER.format(python=sys.executable, root=str(ROOT)))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    if record is not None:
        (folder / "manifest.json").write_text(json.dumps(record))
    return folder


def getprop_asked(log) -> int:
    return sum("getprop" in c[-1] for c in calls(log) if "shell" in c)


def test_android_is_asked_once_and_its_runner_folder_is_data_local_tmp(stand_in_adb, tmp_path, monkeypatch):
    stand_in_android(tmp_path, monkeypatch)
    t = AdbTransport("STANDIN01")
    assert t.android() == "14" and t.runner_dir == RUNNER_DIR == "/data/local/tmp/whisperkv"
    assert t.runner_dir == RUNNER_DIR and getprop_asked(stand_in_adb) == 1
    assert AdbTransport("STANDIN01", dir="/opt/w").runner_dir == "/opt/w" and getprop_asked(stand_in_adb) == 1


def test_a_linux_board_over_adb_keeps_its_home_folder(stand_in_adb):
    t = AdbTransport("STANDIN01")
    assert t.android() is None and t.runner_dir == "~/whisperkv"


def test_the_library_path_is_the_search_orders_vendor_folders_and_a_release_is_read_strictly():
    assert LIBRARY_PATH == "/vendor/lib64/mt8189:/vendor/lib64"
    assert release("14\n") == "14" and release("8.1.0") == "8.1.0"
    assert release("") is None and release('{"runner": "native"}') is None
    assert os_name("14", "mt8189") == "Android 14 on MT8189" and os_name("14") == "Android 14"
    assert os_name(None, "mt8189") is None and is_android("Android 14") and not is_android("Linux")


def test_the_native_runner_starts_on_android_with_the_vendor_library_path(stand_in_adb, tmp_path):
    board = board_with(tmp_path / "board", {"runner": "native", "android": "14"})
    said = refused_hello(open_transport(f"adb://STANDIN01?dir={board}"), ["--backend", "dla", *PYTHON_ONLY])
    assert said == {"argv": ["--backend", "dla"], "ld": LIBRARY_PATH}
    started = [c for c in calls(stand_in_adb) if NATIVE_EXE in c[-1]]
    assert started == [["-s", "STANDIN01", "shell", "-T", f"cd {board} && exec env LD_LIBRARY_PATH={LIBRARY_PATH} "
                        f"{NATIVE_EXE} --backend dla"]]
    assert getprop_asked(stand_in_adb) == 0          # deploy's record said Android: nothing more to ask


def test_off_android_it_starts_plain_and_runner_native_without_a_record_asks_getprop(stand_in_adb, tmp_path,
                                                                                      monkeypatch):
    board = board_with(tmp_path / "linux", {"runner": "native", "android": None})
    assert refused_hello(open_transport(f"adb://STANDIN01?dir={board}"), [])["ld"] != LIBRARY_PATH
    assert getprop_asked(stand_in_adb) == 0
    stand_in_android(tmp_path, monkeypatch)
    asked = board_with(tmp_path / "asked", None)
    said = refused_hello(open_transport(f"adb://STANDIN01?dir={asked}&runner=native"), PYTHON_ONLY)
    assert said == {"argv": [], "ld": LIBRARY_PATH} and getprop_asked(stand_in_adb) == 1
