"""PySide6 6.12.0 drops a reference to True on every Signal.emit (and to None on an empty
QComboBox.currentData()); after enough emits the interpreter aborts with bool_dealloc. pyproject pins
below 6.12 — this test names the cause if a broken binding comes back."""
from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox


class Emitter(QObject):
    ping = Signal(int)


def test_signal_emit_keeps_refcounts(qapp):
    e = Emitter()
    e.ping.connect(lambda _: None)
    before = sys.getrefcount(True)
    for i in range(100):
        e.ping.emit(i)
    assert sys.getrefcount(True) >= before, "this PySide6 build loses a reference per emit: install PySide6 < 6.12"


def test_empty_combo_current_data_keeps_refcounts(qapp):
    combo = QComboBox()
    before = sys.getrefcount(None)
    for _ in range(100):
        combo.currentData()
    assert sys.getrefcount(None) >= before - 5, "this PySide6 build loses a reference to None: install PySide6 < 6.12"
