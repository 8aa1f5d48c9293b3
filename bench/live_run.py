"""A live stream as a run of the studio session: what it costs the UI thread and the session file.

In the real MainWindow (offscreen, local runner): an offline run of the clip, then the clip streamed live at 1x
while a 5 ms QTimer heartbeat runs on the UI thread (any gap is time the UI could not paint). Prints the live
run's passes and token rows, the heartbeat gaps, the UI thread's own CPU time (the most it spent between two
beats, and in each gap over 50 ms: a gap the UI thread spent waiting, for a core or the GIL, shows little), the
session JSON's size and the Compare sentence. Never fails on a time.

It waits in a QEventLoop, as the studio's own event loop does, not QTest.qWait: that holds the GIL while it
sleeps, which starves the decode thread and is no part of the studio.

    QT_QPA_PLATFORM=offscreen python bench/live_run.py [CLIP]     # default test_en.wav
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from app.runs.compare import compare  # noqa: E402
from app.runs.exports import session_json  # noqa: E402
from app.runs.session import run_to_dict  # noqa: E402

AUDIO = ROOT / "resources" / "audio"


def wait(predicate) -> None:
    while not predicate():
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()


def main(clip: str) -> None:
    app = QApplication.instance() or QApplication([])
    window = MainWindow(store=QSettings(tempfile.mktemp(suffix=".ini"), QSettings.Format.IniFormat))
    window.show()
    loaded, finished = [], []
    window.clipLoaded.connect(loaded.append)
    window.runFinished.connect(finished.append)
    window.open_audio(str(AUDIO / clip))
    wait(lambda: loaded)
    window.controls.set_options(replace(window.controls.options(), language="en"))
    offline = window.transcribe()
    wait(lambda: finished)
    finished.clear()

    gaps, last, cpu, long_gaps = [], [time.monotonic()], [time.thread_time(), 0.0], []

    def beat():
        now, used = time.monotonic(), time.thread_time()
        gaps.append(now - last[0])
        cpu[1] = max(cpu[1], used - cpu[0])
        if now - last[0] > 0.05:
            long_gaps.append(f"{1e3 * (now - last[0]):.0f} ms ({1e3 * (used - cpu[0]):.0f} ms UI CPU)")
        last[0], cpu[0] = now, used

    heartbeat = QTimer()
    heartbeat.timeout.connect(beat)
    heartbeat.start(5)
    window.live_panel.startRequested.emit("file")
    live = window.session.runs[-1]
    wait(lambda: finished)
    heartbeat.stop()

    g = sorted(gaps)
    print(f"| clip | passes | live rows | offline rows | UI gap median / p99 / max (ms) | "
          f"gaps > 50 ms (UI CPU in each) | "
          f"most UI CPU between beats (ms) | session JSON (live run) MB |\n|---|---|---|---|---|---|---|---|\n"
          f"| {clip} | {len(live.live['passes'])} | {len(live.rows)} | {len(offline.rows)} | "
          f"{1e3 * g[len(g) // 2]:.1f} / {1e3 * g[int(len(g) * 0.99)]:.1f} / {1e3 * g[-1]:.1f} | "
          f"{len(long_gaps)} of {len(g)}{': ' + ', '.join(long_gaps) if long_gaps else ''} | {1e3 * cpu[1]:.1f} | "
          f"{len(session_json(window.session)) / 1e6:.2f} ({len(json.dumps(run_to_dict(live))) / 1e6:.2f}) |")
    print()
    print(compare(live, offline).sentence())
    window.close()
    app.processEvents()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "test_en.wav")
