"""GUI test helpers: a settings file per test, event waiting, and one real transcription shared per module."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import time
from functools import lru_cache

import pytest
from PySide6.QtCore import QEventLoop, QSettings, QTimer

from core.model.audio import SAMPLE_RATE
from core.stream.feed import realtime_blocks
from tests.conftest import AUDIO

# The studio writes QA reports under its data folder when a suite ends: the tests' go to a folder of their own.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="whisperkv-test-data-")
atexit.register(shutil.rmtree, os.environ["XDG_DATA_HOME"], True)

GIVE_UP_S = 600  # only a safety net against a hang; no test checks how long anything takes


def wait_for(predicate, what: str, give_up_s: float = GIVE_UP_S) -> None:
    deadline = time.monotonic() + give_up_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        run_events_for(20)


class HeldSource:
    """Stands in for app/work/live_worker.py's `realtime_blocks`: the clip at 1x up to `hold_s`, then held, as a
    microphone still recording, until `release()` (the stop pressed). On a machine so loaded that a few passes
    outlast the clip, a stop still lands mid-file. `held` is set once the source waits."""

    def __init__(self, hold_s: float):
        self.hold_s, self.held, self.released = hold_s, threading.Event(), threading.Event()

    def __call__(self, audio, *args, **kw):
        taken = 0
        for block in realtime_blocks(audio, *args, **kw):
            if taken >= self.hold_s * SAMPLE_RATE:
                self.held.set()
                self.released.wait()
            taken += len(block)
            yield block

    def release(self) -> None:
        self.released.set()


def on_gui_thread(monkeypatch, widget, method: str) -> list[bool]:
    """Wraps a widget's method to record, call by call, whether it ran on the GUI thread: a worker's signal connected
    to a lambda runs it on the worker's thread, which may crash the window at random (PySide calls a lambda on the
    sender's thread, a method of a QObject on that object's)."""
    seen, real = [], getattr(widget, method)

    def recorded(*args, **kw):
        seen.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kw)

    monkeypatch.setattr(widget, method, recorded)
    return seen


def run_events_for(ms: int) -> None:
    """Not QTest.qWait: that holds the GIL while it waits, so a worker doing I/O (importing librosa for a
    file soundfile cannot read) waited up to 20 ms for each system call: 200 s for one failed load.
    QEventLoop.exec lets the GIL go."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


@pytest.fixture(autouse=True)
def gui_thread_gc(qapp):
    """As in the studio (the main window installs it): cycles are collected on the GUI thread only."""
    from app.background import collect_garbage_on_gui_thread

    collect_garbage_on_gui_thread(qapp)


def settings_file(path) -> QSettings:
    return QSettings(str(path), QSettings.Format.IniFormat)


def make_window(store: QSettings, **kw):
    from app.main_window import MainWindow

    window = MainWindow(store=store, **kw)
    window.show()
    return window


def open_and_wait(window, name: str) -> None:
    loaded = []
    window.clipLoaded.connect(loaded.append)
    window.open_audio(str(AUDIO / name))
    wait_for(lambda: loaded, f"{name} to load")
    assert loaded[0] is not None, f"{name} did not load"


def transcribe_and_wait(window, **options):
    from dataclasses import replace

    finished = []
    window.runFinished.connect(finished.append)
    # As a user sets the boxes: attention stays ticked or not, unless given, whatever the cache
    box = options.pop("attention", window.controls.attention.isChecked())
    window.controls.set_options(replace(window.controls.options(), attention=False, **options), attention=box)
    run = window.transcribe()
    assert run is not None
    wait_for(lambda: finished, "the run to finish")
    window.runFinished.disconnect(finished.append)
    return run


@pytest.fixture(scope="module")
def en_window(qapp, tmp_path_factory):
    """One window that transcribed test_en.wav on the local runner (cache on, language en)."""
    window = make_window(settings_file(tmp_path_factory.mktemp("settings") / "app.ini"))
    open_and_wait(window, "test_en.wav")
    transcribe_and_wait(window, language="en", cache=True)
    yield window
    window.close()


@lru_cache(maxsize=1)
def special_tokens():
    """The special token ids (EOT, timestamps) for synthetic runs, from the tokenizer alone."""
    from core.model.tokenizer import WhisperTokenizer
    from core.model.weights import find_tokenizer

    return WhisperTokenizer.from_file(find_tokenizer()).special
