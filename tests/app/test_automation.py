"""`whisperkv gui --open AUDIO --transcribe --screenshot PNG --quit`, as the README's screenshot is made:
offscreen, Chinese transcript, exit 0."""
from __future__ import annotations

import os
import subprocess
import sys

from PySide6.QtGui import QImage

from app.fonts import cjk_families
from core.qa.scoring import error_rate
from tests.conftest import AUDIO, ROOT


def test_a_cjk_font_is_installed(qapp):
    assert cjk_families(), "no Simplified Chinese font: install fonts-wqy-microhei or Chinese renders as boxes"


def test_scripted_run_writes_the_screenshot(tmp_path, references):
    shot = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    result = subprocess.run([sys.executable, "-m", "cli.main", "gui", "--open", str(AUDIO / "test_zh.wav"),
                             "--transcribe", "--screenshot", str(shot), "--quit"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    text = result.stdout.strip().splitlines()[-1]
    assert error_rate(references["test_zh.wav"]["reference"], text, "zh") <= 0.2
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1600, 1000)


def test_scripted_run_with_a_missing_file_exits_1(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    result = subprocess.run([sys.executable, "-m", "app", "--open", str(tmp_path / "absent.wav"), "--transcribe",
                             "--quit"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "not found" in result.stderr and "—" in result.stderr
