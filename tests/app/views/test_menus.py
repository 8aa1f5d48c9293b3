"""Help ▸ Keyboard shortcuts lists every key the window binds (its menus, a view's action, the presenter's keys),
read from the window; Help links the documentation; View holds Present (F11) and full screen."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtTest import QTest

from app.views import menus
from app.views.shortcuts import ShortcutsDialog, key_text
from tests.app.conftest import make_window, settings_file


def menu_actions(window, title: str) -> dict[str, QAction]:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == title)
    return {a.text().replace("&", ""): a for a in menu.actions() if not a.isSeparator()}


def every_binding(window) -> set[str]:
    keys = {key_text(k) for a in window.findChildren(QAction) for k in a.shortcuts()}
    keys |= {key_text(s.key()) for s in window.findChildren(QShortcut)}
    return {k for k in keys if k}


def test_the_help_menu_lists_every_shortcut_the_window_binds(qtbot, tmp_path, monkeypatch):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    bound = every_binding(window)
    assert {"F11", "Ctrl+R", "Esc", "F1", "Ctrl+Shift+F"} <= bound and len(bound) >= 9
    menu_actions(window, "Help")["Keyboard shortcuts"].trigger()
    dialog = window.findChild(ShortcutsDialog)
    assert dialog is not None and dialog.isVisible()
    listed = dialog.rows()
    assert bound <= {keys for keys, _ in listed}, bound - {keys for keys, _ in listed}
    assert ("Ctrl+R", "Transcribe") in listed and ("F11", "Present") in listed
    assert ("Esc", "Stop") in listed and ("F1", "Keyboard shortcuts") in listed
    assert any(keys == "Esc" and "live transcript window" in what for keys, what in listed)

    opened = []
    monkeypatch.setattr(menus.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    menu_actions(window, "Help")["Documentation"].trigger()
    assert opened == [str(menus.DOCS)] and menus.DOCS.name == "gui.md" and menus.DOCS.is_file()


def test_present_and_full_screen_are_in_the_view_menu(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    view = menu_actions(window, "View")
    assert view["Present"] is window.live_panel.present_action
    assert view["Present"].shortcut() == QKeySequence("F11")
    with qtbot.waitActive(window):
        window.activateWindow()
    QTest.keyClick(window, Qt.Key.Key_F11)                     # F11 from anywhere in the window presents
    assert window.live_panel.present_action.isChecked() and window.live_panel.presenter.isVisible()
    window.live_panel.presenter.close()
    view["Full screen"].trigger()
    assert window.isFullScreen()
    view["Full screen"].trigger()
    assert not window.isFullScreen()
