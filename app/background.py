"""Run a blocking function on a QThread and hear back through signals, so the UI thread never waits; and Python's
cyclic garbage collection on the GUI thread only, so that no such thread destroys a widget.

A window, a dialog or a menu that only a reference cycle keeps alive is destroyed by whichever thread the collector
happens to run on. In a worker thread (a background task, the audio callback, the SSH transport) that destroys Qt
widgets off the GUI thread: PySide then hands part of the deletion to the GUI thread, and the two deadlock on Qt's
and Python's locks (seen: a worker importing librosa collected a closed window while the GUI thread was freeing the
same tree). pyqtgraph's GarbageCollector turns automatic collection off and collects on a GUI-thread timer instead.
"""
from __future__ import annotations

from typing import Callable

from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QObject, QThread, Signal, Slot
from PySide6.QtWidgets import QApplication

from app.errors import Failure, failure_of


class Task(QObject):
    done = Signal(object)
    failed = Signal(object)        # Failure
    progress = Signal(int, int)    # done, total

    def __init__(self, fn: Callable, *args, with_progress: bool = False):
        super().__init__()
        self.fn, self.args, self.with_progress = fn, args, with_progress

    @Slot()
    def run(self) -> None:
        try:
            kw = {"progress": self.progress.emit} if self.with_progress else {}
            result = self.fn(*self.args, **kw)
        except Exception as exc:  # reported as a dialog by whoever started the task
            self.failed.emit(failure_of(exc))
        else:
            self.done.emit(result)


class _Callback(QObject):
    """Lives on the UI thread, so a task's signal reaches the callback there (a queued connection)."""

    def __init__(self, fn: Callable, parent: QObject):
        super().__init__(parent)
        self.fn = fn

    @Slot(object)
    def call1(self, value) -> None:
        self.fn(value)

    @Slot(int, int)
    def call2(self, a: int, b: int) -> None:
        self.fn(a, b)


class TaskRunner(QObject):
    """Owns the threads of running tasks until they end; `wait_all` lets the window close cleanly."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._running: dict[Task, tuple[QThread, list[_Callback]]] = {}

    def start(self, fn: Callable, *args, on_done: Callable | None = None, on_failed: Callable[[Failure], None] | None = None,
              on_progress: Callable[[int, int], None] | None = None) -> Task:
        task = Task(fn, *args, with_progress=on_progress is not None)
        thread = QThread()
        task.moveToThread(thread)
        callbacks = []
        for signal, fn, slot in ((task.done, on_done, "call1"), (task.failed, on_failed, "call1"),
                                 (task.progress, on_progress, "call2")):
            if fn is not None:
                cb = _Callback(fn, self)
                signal.connect(getattr(cb, slot))
                callbacks.append(cb)
        task.done.connect(thread.quit)
        task.failed.connect(thread.quit)
        thread.started.connect(task.run)
        thread.finished.connect(self._reap)
        self._running[task] = (thread, callbacks)
        thread.start()
        return task

    @Slot()
    def _reap(self) -> None:
        for task, (thread, callbacks) in list(self._running.items()):
            if thread.isFinished():
                del self._running[task]
                for cb in callbacks:
                    cb.deleteLater()

    def busy(self) -> bool:
        return bool(self._running)

    def wait_all(self, ms: int = 10000) -> None:
        for thread, _ in list(self._running.values()):
            thread.quit()
            thread.wait(ms)


GC_INTERVAL_S = 1.0


def collect_garbage_on_gui_thread(app: QApplication) -> None:
    """Once per QApplication; the collector lives as long as the app."""
    if getattr(app, "_gui_thread_gc", None) is None:
        app._gui_thread_gc = GarbageCollector(interval=GC_INTERVAL_S)
