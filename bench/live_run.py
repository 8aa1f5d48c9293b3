"""A live stream as a run of the studio session: what it costs the UI thread and the session file.

In the real MainWindow (offscreen, local runner): an offline run of the clip, then the clip streamed live at 1x
while a 5 ms QTimer heartbeat runs on the UI thread (any gap is time the UI could not paint). Prints the live
run's passes and token rows, the heartbeat gaps, the session JSON's size and the Compare sentence. Never fails
on a time.

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

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from app.runs.compare import compare  # noqa: E402
from app.runs.exports import session_json  # noqa: E402
from app.runs.session import run_to_dict  # noqa: E402

AUDIO = ROOT / "resources" / "audio"


def wait(predicate) -> None:
    while not predicate():
        QTest.qWait(20)


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

    gaps, last = [], [time.monotonic()]

    def beat():
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now

    heartbeat = QTimer()
    heartbeat.timeout.connect(beat)
    heartbeat.start(5)
    window.live_panel.startRequested.emit("file")
    live = window.session.runs[-1]
    wait(lambda: finished)
    heartbeat.stop()

    g = sorted(gaps)
    print(f"| clip | passes | live rows | offline rows | UI gap median / p99 / max (ms) | gaps > 50 ms | "
          f"session JSON (live run) MB |\n|---|---|---|---|---|---|---|\n"
          f"| {clip} | {len(live.live['passes'])} | {len(live.rows)} | {len(offline.rows)} | "
          f"{1e3 * g[len(g) // 2]:.1f} / {1e3 * g[int(len(g) * 0.99)]:.1f} / {1e3 * g[-1]:.1f} | "
          f"{sum(x > 0.05 for x in g)} of {len(g)} | {len(session_json(window.session)) / 1e6:.2f} "
          f"({len(json.dumps(run_to_dict(live))) / 1e6:.2f}) |")
    print()
    print(compare(live, offline).sentence())
    window.close()
    app.processEvents()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "test_en.wav")
