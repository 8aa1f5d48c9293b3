"""Closing with runs not saved in a session file asks Save / Discard / Cancel; the studio started by a script
(--quit) and the tests' windows never ask."""
from __future__ import annotations

import json

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from app.close_guard import OBJECT_NAME
from tests.app.conftest import make_window, settings_file
from tests.app.runs.test_exports import make_run, two_windows


def answer_with(button: QMessageBox.StandardButton, asked: list) -> None:
    """Press `button` in the question once it is open (it runs its own event loop)."""
    def press():
        box = next((w for w in QApplication.topLevelWidgets() if w.objectName() == OBJECT_NAME and w.isVisible()), None)
        if box is None:
            QTimer.singleShot(20, press)
            return
        asked.append(box.text())
        box.button(button).click()
    QTimer.singleShot(0, press)


def window_with_a_run(qtbot, tmp_path, ask=True):
    window = make_window(settings_file(tmp_path / "app.ini"), ask_on_close=ask)
    qtbot.addWidget(window)
    make_run(window.session, two_windows())
    return window


def test_cancel_keeps_the_window_and_discard_closes_it(qtbot, tmp_path):
    window = window_with_a_run(qtbot, tmp_path)
    asked = []
    answer_with(QMessageBox.StandardButton.Cancel, asked)
    assert window.close() is False and window.isVisible()
    assert asked == ["1 run of this session is not saved in a session file."]
    answer_with(QMessageBox.StandardButton.Discard, asked)
    assert window.close() is True and len(asked) == 2


def test_save_writes_the_session_where_the_user_picks_then_closes(qtbot, tmp_path, monkeypatch):
    window = window_with_a_run(qtbot, tmp_path)
    target = tmp_path / "picked" / "mine.json"
    target.parent.mkdir()
    # The file dialog is the platform's; the path a user would pick is handed over here.
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "JSON (*.json)"))
    asked = []
    answer_with(QMessageBox.StandardButton.Save, asked)
    assert window.close() is True and asked
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert [r["id"] for r in doc["runs"]] == [1]


def test_a_saved_session_and_a_scripted_window_close_without_asking(qtbot, tmp_path):
    from app.runs.exports import write_session

    window = window_with_a_run(qtbot, tmp_path)
    write_session(window.session, tmp_path / "s.json")
    assert window.close() is True
    scripted = window_with_a_run(qtbot, tmp_path, ask=False)
    assert scripted.close() is True
