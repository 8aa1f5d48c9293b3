"""Run under a real X server (tests/app/test_live_on_x.py starts Xvfb and runs this as a subprocess): the studio
streams a clip at 1x through the local runner, presents it full screen, stops it mid-file with Esc in the
presenter, and prints what a viewer would see as JSON, with two screenshots of the whole screen.

    DISPLAY=:N QT_QPA_PLATFORM=xcb python3 -m tests.app.live_on_x OUT_DIR [CLIP]
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.work import live_worker
from tests.app.conftest import HeldSource, run_events_for, wait_for
from tests.conftest import AUDIO

PASSES_BEFORE_STOP = 3
MARGIN_S = 8.0          # the source holds this long before the clip's end until Esc (a loaded machine's passes lag)


def grab(app: QApplication, path: Path) -> None:
    run_events_for(300)              # let the last frame reach the X server
    app.primaryScreen().grabWindow(0).save(str(path))


def main(out: Path, clip: str) -> dict:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    from app.main_window import MainWindow

    window = MainWindow(store=QSettings(tempfile.mktemp(suffix=".ini"), QSettings.Format.IniFormat))
    window.show()
    loaded, finished, failed = [], [], []
    window.clipLoaded.connect(loaded.append)
    window.runFinished.connect(finished.append)
    window.failureShown.connect(failed.append)
    window.open_audio(str(AUDIO / clip))
    wait_for(lambda: loaded, "the clip to load")
    connected = []       # the runner up first (a cold start builds its graphs): the stream's passes start at once
    window.board.worker.connected.connect(connected.append)
    window.board.connect_device(window.device.profile())
    wait_for(lambda: connected or failed, "the runner to start")
    panel = window.live_panel
    window.tabs.setCurrentWidget(panel)
    source = live_worker.realtime_blocks = HeldSource(window.clip.duration_s - MARGIN_S)
    QTest.mouseClick(panel.file_button, Qt.MouseButton.LeftButton)
    run = window.session.runs[-1]
    wait_for(lambda: len(panel.tally.passes) >= PASSES_BEFORE_STOP or finished
             or (source.held.is_set() and panel.tally.passes), "passes of the stream")
    grab(app, out / "live-window.png")
    QTest.mouseClick(panel.present_button, Qt.MouseButton.LeftButton)
    presenter = panel.presenter
    wait_for(lambda: presenter.isVisible() and presenter.windowHandle() is not None
             and presenter.windowHandle().isExposed(), "the presenter to show")
    wait_for(lambda: len(panel.tally.passes) >= PASSES_BEFORE_STOP + 1 or finished or source.held.is_set(),
             "another pass")
    ended_before_stop = bool(finished)
    stopped_at = time.monotonic()
    QTest.keyClick(presenter, Qt.Key.Key_Escape)
    source.release()
    wait_for(lambda: finished, "the stream to stop")
    wait_for(lambda: window.banner.reason not in (None, "streaming"), "the banner")
    grab(app, out / "live-presenter.png")
    screen = presenter.screen().geometry()
    result = {
        "platform": app.platformName(),
        "screen": [screen.width(), screen.height()],
        "presenter": [presenter.width(), presenter.height()],
        "presenter_full_screen": presenter.isFullScreen(),
        "cap_height_px": presenter.cap_height(),
        "presenter_text": presenter.text.toPlainText(),
        "status_line": presenter.status_line.text(),
        "banner_reason": window.banner.reason,
        "banner_text": window.banner.text(),
        "banner_style": window.banner.styleSheet(),
        "stop_reason": run.stop_reason,
        "audio_s": run.live.get("audio_s"),
        "clip_s": window.clip.duration_s,
        "ended_before_stop": ended_before_stop,
        "stop_to_end_s": round(time.monotonic() - stopped_at, 2),
        "failures": [f.problem for f in failed],
        "text": run.text(),
    }
    window.close()
    return result


if __name__ == "__main__":
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    print(json.dumps(main(out_dir, sys.argv[2] if len(sys.argv) > 2 else "en_asterisk_demo-congrats.wav")))
