"""The studio on a real X server (Xvfb) of a laptop's and a desktop's size, one studio per size in four states: as it
first opens (its own default size, fitted to the screen), after transcribing test_en.wav, after a live stream and
after a QA run (then with the tabs enlarged too); as it opens, each kind of device in the panel. In each state every
tab is visited: no control lies outside the window or sideways past its scroll area, none is below its least size,
no label is cut, no scroll area sits in another, and no plot's title, axis or legend lies outside its panel
(tests/app/views/layout_check.py). The window fits the screen, its status bar is on it, the quality strip's last
line is not cut, and nothing the states add grows the window.
Skipped only where Xvfb is not installed (.ci/run installs it)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None,
                                reason="Xvfb is not installed (Debian: apt-get install xvfb), so no real X server")


@pytest.fixture
def x_server(request):
    """Xvfb on a display it picks itself (-displayfd), of the size the test names."""
    width, height = request.param
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24",
                               "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as f:
        display = f.readline().strip()
    yield f":{display}", (width, height)
    server.terminate()
    server.wait(10)


@pytest.mark.parametrize("x_server", [(1280, 800), (1920, 1080)], indirect=True, ids=["1280x800", "1920x1080"])
def test_every_tab_fits_in_every_state_on_a_real_screen(x_server, tmp_path):
    display, (width, height) = x_server
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "tests.app.views.layout_probe"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["screen"] == [width, height]
    x, y, w, h = report["window"]
    assert x >= 0 and y >= 0 and x + w <= width and y + h <= height, report
    assert report["window_after"] == report["window"], "a stream or a QA run grew the window"
    assert report["status_bar_visible"], report
    assert list(report["states"]) == ["as it opens", "after test_en.wav", "after a live stream", "after a QA run",
                                      "after a QA run, the tabs enlarged"]
    for state, tabs in report["states"].items():
        assert "Live" in tabs and "QA suite" in tabs and "Tokens" in tabs, tabs
        faults = {tab: found for tab, found in tabs.items() if found}
        assert not faults, f"{width}x{height}, {state}: {json.dumps(faults, indent=1)}"
    assert len(report["device kinds"]) == 3 and not any(report["device kinds"].values()), report["device kinds"]
    shown, needed = report["quality_strip"]
    assert shown >= needed, report
