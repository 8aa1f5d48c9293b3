"""tools/studio-on-device: the real studio, offscreen, transcribes through a device profile made from a URL and
saves the window (docs/board.md's picture of a run on the board in a box is made this way; here the device is
the local runner, so the test runs anywhere)."""
from __future__ import annotations

import os
import subprocess
import sys

from PySide6.QtGui import QImage

from tests.conftest import AUDIO, ROOT

TOOL = ROOT / "tools" / "studio-on-device"


def studio_on_device(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "user-config"))
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


def test_a_run_through_a_profile_from_a_url_is_saved_as_a_png(tmp_path):
    shot = tmp_path / "shot.png"
    r = studio_on_device(tmp_path, "--device", "local?backend=numpy", "--audio",
                         str(AUDIO / "en_asterisk_hello-world.wav"), "--out", str(shot), "--name", "bench board")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "Hello world."
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1600, 1000)
    # the profile lived in a settings folder of its own: the user's settings were never written
    assert not (tmp_path / "user-config").exists()


def test_a_bad_url_is_one_line_and_exit_2(tmp_path):
    r = studio_on_device(tmp_path, "--device", "ssh://box?colour=blue", "--out", str(tmp_path / "shot.png"))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "unknown device setting 'colour'" in r.stderr
    assert not (tmp_path / "shot.png").exists()
