#!/usr/bin/env python3
"""gui_screenshots.py --out DIR: docs/gui.md's pictures of the studio at 1280×800, taken on a real X server.

    python3 tools/gui_screenshots.py --out docs/

Starts its own Xvfb of that size (Debian: apt-get install xvfb) unless --display names one, runs the studio there
(Qt's xcb platform, the local runner, fresh settings in a temporary folder: yours are never read or touched), its
window filling the screen, and writes three PNGs:

- gui-main.png: test_en.wav transcribed with attention (the transcript, the graphs, the heatmap tab);
- gui-live.png: the Live tab mid-stream, en_asterisk_demo-congrats.wav at 1× (after a few passes);
- gui-qa.png: the QA tab after a run of resources/audio/suite.toml.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
AUDIO = ROOT / "resources" / "audio"
LIVE_PASSES = 4          # the Live picture is taken once the stream has made this many passes
GIVE_UP_S = 900


def start_xvfb(size: str) -> tuple[subprocess.Popen, str]:
    """An Xvfb of `size` (WxH) on a display it picks itself (-displayfd): never one another process holds."""
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{size}x24", "-nolisten", "tcp"],
                              pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as answer:
        number = answer.readline().strip()
    if not number:
        sys.exit("gui_screenshots: Xvfb did not start")
    return server, f":{number}"


def wait_for(predicate, what: str) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.monotonic() + GIVE_UP_S
    while not predicate():
        if time.monotonic() > deadline:
            sys.exit(f"gui_screenshots: gave up waiting for {what}")
        loop = QEventLoop()
        QTimer.singleShot(50, loop.quit)
        loop.exec()


def save(window, path: Path) -> None:
    wait_for(lambda: True, "a frame")
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(400, loop.quit)        # the last refresh and layout land first
    loop.exec()
    if not window.grab().save(str(path), "PNG", 0):     # 0: the most compressed
        sys.exit(f"gui_screenshots: cannot write {path}")
    print(f"{path} ({path.stat().st_size // 1024} kB)")


def take(out: Path, width: int, height: int) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("WhisperKV Studio")       # as the studio names itself (app/launch.py)
    from app.main_window import MainWindow

    window = MainWindow(store=QSettings(str(Path(tempfile.mkdtemp()) / "studio.ini"), QSettings.Format.IniFormat))
    window.show()
    window.setGeometry(0, 0, width, height)      # no window manager on Xvfb: the window is the screen
    finished, failed = [], []
    window.runFinished.connect(finished.append)
    window.failureShown.connect(failed.append)

    def open_clip(name: str) -> None:
        loaded = []
        window.clipLoaded.connect(loaded.append)
        window.open_audio(str(AUDIO / name))
        wait_for(lambda: loaded, f"{name} to load")
        window.clipLoaded.disconnect(loaded.append)

    open_clip("test_en.wav")
    window.controls.attention.setChecked(True)
    window.controls.language.setCurrentText("en")
    window.transcribe()
    wait_for(lambda: finished or failed, "test_en.wav's run")
    window.tabs.setCurrentWidget(window.heatmap)
    save(window, out / "gui-main.png")

    open_clip("en_asterisk_demo-congrats.wav")
    panel = window.live_panel
    window.tabs.setCurrentWidget(panel)
    ended = []
    window.live_runs.ended.connect(ended.append)
    window.start_live("file")
    wait_for(lambda: len(panel.tally.passes) >= LIVE_PASSES or ended or failed, "passes of the stream")
    save(window, out / "gui-live.png")
    window.stop()
    wait_for(lambda: ended, "the stream to stop")

    done = []
    window.qa.suiteFinished.connect(done.append)
    window.tabs.setCurrentWidget(window.qa)
    window.qa.start(str(AUDIO / "suite.toml"))
    wait_for(lambda: done or failed, "the QA suite")
    window.qa.table.selectRow(0)
    save(window, out / "gui-qa.png")
    window.close()
    if failed:
        sys.exit("gui_screenshots: " + "; ".join(f.problem for f in failed))


def main() -> int:
    ap = argparse.ArgumentParser(prog="gui_screenshots.py", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs"), help="where the PNGs go (default: docs/)")
    ap.add_argument("--size", default="1280x800", help="the screen's size, WxH (default: 1280x800)")
    ap.add_argument("--display", help="an X display to use rather than an Xvfb of its own")
    args = ap.parse_args()
    width, height = (int(n) for n in args.size.lower().split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if os.environ.get("GUI_SCREENSHOTS_CHILD"):
        take(out, width, height)
        return 0
    server, display = (None, args.display) if args.display else start_xvfb(args.size)
    with tempfile.TemporaryDirectory(prefix="gui-screenshots-") as home:
        env = os.environ | {"DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "GUI_SCREENSHOTS_CHILD": "1",
                            "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home}
        try:
            return subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env, check=False).returncode
        finally:
            if server is not None:
                server.terminate()
                server.wait(30)


if __name__ == "__main__":
    sys.exit(main())
