"""The menu bar, one table: File (open audio, export, quit), Run (transcribe, stop), View (present the live text,
full screen) and Help (the keyboard shortcuts, the documentation). Each row is a menu item, its shortcut and what
it does on the window; Help ▸ Keyboard shortcuts lists what the window binds (app/views/shortcuts.py)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMainWindow

from app.views.shortcuts import show_shortcuts

DOCS = Path(__file__).resolve().parents[2] / "docs" / "gui.md"


@dataclass(frozen=True)
class MenuItem:
    menu: str
    text: str                                        # "-": a separator; "&Export": the export menu
    key: QKeySequence.StandardKey | str | None = None
    slot: Callable | None = None                     # (window) -> what the item calls
    action: Callable | None = None                   # (window) -> an action of a view, shown here as it is
    tip: str = ""


def toggle_full_screen(window: QMainWindow) -> None:
    window.showNormal() if window.isFullScreen() else window.showFullScreen()


def open_docs(window: QMainWindow) -> bool:
    """The studio's page of the documentation (docs/gui.md); the status bar says where it is if no viewer opens."""
    opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(DOCS)))
    if not opened:
        window.statusBar().showMessage(f"The documentation is {DOCS}", 15000)
    return opened


MENUS: list[MenuItem] = [
    MenuItem("&File", "&Open audio…", QKeySequence.StandardKey.Open, lambda w: w.audio.open_dialog),
    MenuItem("&File", "-"),
    MenuItem("&File", "&Export"),
    MenuItem("&File", "-"),
    MenuItem("&File", "&Quit", QKeySequence.StandardKey.Quit, lambda w: w.close),
    MenuItem("&Run", "&Transcribe", "Ctrl+R", lambda w: w.transcribe),
    MenuItem("&Run", "&Stop", "Esc", lambda w: w.stop),
    MenuItem("&View", "Present", action=lambda w: w.live_panel.present_action),
    MenuItem("&View", "&Full screen", "Ctrl+Shift+F", lambda w: lambda: toggle_full_screen(w),
             tip="The studio's window full screen, or back"),
    MenuItem("&Help", "&Keyboard shortcuts", QKeySequence.StandardKey.HelpContents,
             lambda w: lambda: show_shortcuts(w)),
    MenuItem("&Help", "&Documentation", slot=lambda w: lambda: open_docs(w), tip=str(DOCS)),
]


def build_menus(window: QMainWindow, exports) -> dict[str, QAction]:
    """The window's menus from MENUS; returns each item's action by its text (without the "&")."""
    menus, actions = {}, {}
    for item in MENUS:
        menu = menus.get(item.menu) or menus.setdefault(item.menu, window.menuBar().addMenu(item.menu))
        if item.text == "-":
            menu.addSeparator()
        elif item.text == "&Export":
            exports.add_to(menu)
        else:
            action = item.action(window) if item.action else QAction(item.text, window)
            if item.key is not None:
                action.setShortcut(QKeySequence(item.key))
            if item.tip:
                action.setToolTip(item.tip)
            if item.slot is not None:
                action.triggered.connect(item.slot(window))
            menu.addAction(action)
            actions[action.text().replace("&", "")] = action
    return actions
