"""Live in front of a customer, on a real X server: Xvfb at 1920×1080 on a free display, the studio in a subprocess
(xcb, not offscreen) streams en_asterisk_demo-congrats.wav at 1×, presents it full screen, and Esc in the presenter
stops it mid-file. It must end without an error banner, with the presenter's capital letters at least 40 px tall.

Skipped only when Xvfb is not installed (.ci/run installs it)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.views.stop_banner import STYLES

ROOT = Path(__file__).resolve().parents[2]
XVFB = shutil.which("Xvfb")


@pytest.fixture
def display():
    """A 1920×1080 Xvfb on a display it picks itself (-displayfd): never one another process holds."""
    read, write = os.pipe()
    server = subprocess.Popen([XVFB, "-displayfd", str(write), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                              pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as answer:
        number = answer.readline().strip()
    assert number, "Xvfb did not start"
    yield f":{number}"
    server.terminate()
    server.wait(timeout=30)


@pytest.mark.skipif(XVFB is None, reason="Xvfb is not installed (apt-get install xvfb; .ci/run installs it)")
def test_a_stream_stopped_mid_file_on_a_real_x_server(display, tmp_path):
    env = os.environ | {"DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run([sys.executable, "-m", "tests.app.live_on_x", str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["platform"] == "xcb" and seen["screen"] == [1920, 1080]
    assert not seen["failures"]
    assert not seen["ended_before_stop"] and seen["audio_s"] < seen["clip_s"] - 2      # stopped mid-file
    assert seen["stop_reason"] == "stopped" and seen["banner_reason"] == "stopped"
    assert STYLES["error"][1] not in seen["banner_style"] and "Error" not in seen["banner_text"]
    assert seen["presenter_full_screen"] and seen["presenter"] == [1920, 1080]
    assert seen["cap_height_px"] >= 40
    assert seen["presenter_text"] == seen["text"] and "congratulations" in seen["text"].lower()
    assert seen["status_line"].startswith("stopped")
    for shot in ("live-window.png", "live-presenter.png"):
        assert (tmp_path / shot).stat().st_size > 10_000
