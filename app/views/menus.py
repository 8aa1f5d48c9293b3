"""The menu bar: File (open audio, export, quit) and Run (transcribe, stop)."""
from __future__ import annotations

from typing import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from app.views.export_menu import ExportMenu


def build_menus(window: QMainWindow, open_audio: Callable[[], None], exports: ExportMenu,
                transcribe: Callable[[], object], stop: Callable[[], None]) -> None:
    file_menu = window.menuBar().addMenu("&File")
    open_action = QAction("&Open audio…", window, shortcut=QKeySequence.StandardKey.Open)
    open_action.triggered.connect(open_audio)
    file_menu.addAction(open_action)
    file_menu.addSeparator()
    exports.add_to(file_menu)
    file_menu.addSeparator()
    quit_action = QAction("&Quit", window, shortcut=QKeySequence.StandardKey.Quit)
    quit_action.triggered.connect(window.close)
    file_menu.addAction(quit_action)
    run_menu = window.menuBar().addMenu("&Run")
    for text, slot, key in (("&Transcribe", transcribe, "Ctrl+R"), ("&Stop", stop, "Esc")):
        action = QAction(text, window, shortcut=QKeySequence(key))
        action.triggered.connect(slot)
        run_menu.addAction(action)
