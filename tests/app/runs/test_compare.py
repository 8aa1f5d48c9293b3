"""Compare runs shows each run's cross-attention cache, so the kv and absorbed forms' memory is side by side; the
text scorer it needs for a live run is imported off the UI thread."""
from __future__ import annotations

import os
import subprocess
import sys

from app.runs.compare import compare, cross_cache, cross_text
from app.runs.session import Session
from core.decode.events import EncodedEvent
from tests.app.runs.test_exports import make_run, token
from tests.conftest import ROOT

KV_BYTES, F_BYTES = 2 * 6 * 1500 * 512 * 4, 1500 * 512 * 4


def run_with(session, form: str, size: int, ms: float):
    encoded = EncodedEvent(0, 900.0, "en", cross_form=form, cross_bytes=size)
    return make_run(session, [encoded] + [token(0, i, i + 1, "x", ms=ms) for i in range(5)])


def test_compare_puts_both_cross_caches_in_the_verdict():
    session = Session()
    kv, absorbed = run_with(session, "kv", KV_BYTES, 10.0), run_with(session, "absorbed", F_BYTES, 12.0)
    assert cross_cache(kv) == ("kv", KV_BYTES) and cross_cache(absorbed) == ("absorbed", F_BYTES)
    sentence = compare(absorbed, kv).sentence()
    assert f"#{kv.id}: cross K/V 36.9 MB" in sentence and f"#{absorbed.id}: cross F 3.1 MB (absorbed)" in sentence
    assert "absorbed cross" in sentence and "Tokens identical" in sentence


def test_a_runner_that_does_not_report_its_cross_cache_adds_nothing():
    session = Session()
    older = make_run(session, [EncodedEvent(0, 900.0, "en")] + [token(0, i, i + 1, "x") for i in range(3)])
    assert cross_cache(older) is None and cross_text(older) == ""
    other = run_with(session, "kv", KV_BYTES, 10.0)
    assert "cross" not in compare(older, other).sentence()


def test_a_one_off_warm_up_is_marked_and_the_steady_figure_given():
    """The first cache-off run of a runner builds its graph once (13 s here): the whole-decode ratio with it
    is no measure of the cache, so the steady ratio is given beside it."""
    session = Session()
    on = make_run(session, [EncodedEvent(0, 900.0, "en")] + [token(0, i, i + 1, "x", ms=10.0) for i in range(6)])
    off_events = [token(0, i, i + 1, "x", ms=15.0) for i in range(6)]
    off_events[1] = token(0, 1, 2, "x", ms=13000.0)
    off = make_run(session, [EncodedEvent(0, 900.0, "en")] + off_events, cache=False)
    sentence = compare(on, off).sentence()
    assert f"#{off.id} includes a one-off warm-up of 12.98 s" in sentence
    assert "steady 1.5× (0.06 s vs 0.09 s)" in sentence
    assert "warm-up" not in compare(on, make_run(session, [EncodedEvent(0, 900.0, "en")] +
                                                  [token(0, i, i + 1, "x", ms=15.0) for i in range(6)])).sentence()


def test_compare_starts_with_two_runs_of_the_same_clip(qtbot):
    from app.views.compare_panel import ComparePanel

    session = Session()
    first = make_run(session, [EncodedEvent(0, 900.0, "en")] + [token(0, i, i + 1, "x", ms=10.0) for i in range(4)])
    other = make_run(session, [EncodedEvent(0, 900.0, "zh")] + [token(0, i, i + 1, "x", ms=10.0) for i in range(4)])
    other.audio_name = "test_zh.wav"
    spike = [token(0, i, i + 1, "x", ms=12.0) for i in range(4)]
    spike[1] = token(0, 1, 2, "x", ms=9000.0)
    last = make_run(session, [EncodedEvent(0, 900.0, "en")] + spike, cache=False)
    panel = ComparePanel(session)
    qtbot.addWidget(panel)
    panel.refresh_runs()
    assert (panel.a.currentData(), panel.b.currentData()) == (first.id, last.id)
    assert panel.plot.getPlotItem().ctrl.logYCheck.isChecked()
    assert "log scale" in panel.plot.getPlotItem().titleLabel.text


PROBE = """
import sys, tempfile, threading
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

importers = []

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "jiwer":
            importers.append(threading.current_thread() is threading.main_thread())
        return None

sys.meta_path.insert(0, Watch())
app = QApplication([])
from app.main_window import MainWindow
window = MainWindow(store=QSettings(tempfile.mktemp(suffix=".ini"), QSettings.Format.IniFormat))
window.tasks.wait_all()
print(importers, flush=True)
window.close()
"""


def test_the_studio_imports_the_text_scorer_off_the_ui_thread():
    """Scoring a live run's text as it ends imports jiwer; the window imports it at start, on a task's thread,
    so the UI thread never does (a fresh process: this one may have imported it already)."""
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, QT_QPA_PLATFORM="offscreen"), check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "[False]"
