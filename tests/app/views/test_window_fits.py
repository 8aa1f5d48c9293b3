"""The first window on a real X server (Xvfb) of a laptop's and a desktop's size: it fits the screen, its status
bar is on screen, and after a real transcription no plot's title, axis or legend lies outside its panel and
the quality strip's last line is not cut. Skipped only where Xvfb is not installed (.ci/run installs it)."""
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
def test_nothing_is_clipped_on_a_real_screen(x_server, tmp_path):
    display, (width, height) = x_server
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "tests.app.views.layout_probe"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["screen"] == [width, height]
    x, y, w, h = report["window"]
    assert x >= 0 and y >= 0 and x + w <= width and y + h <= height, report
    assert report["status_bar_visible"], report
    assert report["clipped"] == {"CachePlot": [], "LatencyPlot": [], "EotPlot": [], "AttentionHeatmap": []}, report
    shown, needed = report["quality_strip"]
    assert shown >= needed, report
