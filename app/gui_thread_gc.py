"""Python's cyclic garbage collection, run on the GUI thread only.

A window, a dialog or a menu that only a reference cycle keeps alive is destroyed by whichever thread
the collector happens to run on. In a worker thread (a background task, the audio callback, the SSH
transport) that destroys Qt widgets off the GUI thread: PySide then hands part of the deletion to the
GUI thread, and the two deadlock on Qt's and Python's locks (seen: a worker importing librosa collected
a closed window while the GUI thread was freeing the same tree). pyqtgraph's GarbageCollector turns
automatic collection off and collects on a GUI-thread timer instead.
"""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

INTERVAL_S = 1.0


def collect_garbage_on_gui_thread(app: QApplication) -> None:
    """Once per QApplication; the collector lives as long as the app."""
    if getattr(app, "_gui_thread_gc", None) is None:
        from pyqtgraph.util.garbage_collector import GarbageCollector

        app._gui_thread_gc = GarbageCollector(interval=INTERVAL_S)
