"""File dialogs start where the user last was, and in the home folder the first time (a fresh settings store),
never in the working directory."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from tests.app.conftest import make_window, open_and_wait, settings_file
from tests.conftest import AUDIO


class Dialogs:
    """Stands in for QFileDialog's static calls: records where each would start, and answers `answer` (cancelled)."""

    def __init__(self, monkeypatch):
        self.started: list[str] = []
        self.answer = ("", "")
        for name in ("getOpenFileName", "getSaveFileName"):
            monkeypatch.setattr(QFileDialog, name, staticmethod(self.ask))

    def ask(self, parent, title, start="", filters="", *args, **kw):
        self.started.append(start)
        return self.answer


def test_the_open_dialog_starts_at_home_then_where_the_last_file_was(qtbot, tmp_path, monkeypatch):
    dialogs = Dialogs(monkeypatch)
    store = settings_file(tmp_path / "app.ini")
    window = make_window(store)
    qtbot.addWidget(window)
    window.audio.open_dialog()
    assert dialogs.started == [str(Path.home())]
    open_and_wait(window, "en_asterisk_hello-world.wav")
    window.audio.open_dialog()
    assert dialogs.started[-1] == str(AUDIO.resolve())
    window.close()                                        # the settings are saved on close

    again = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(again)
    again.audio.open_dialog()
    assert dialogs.started[-1] == str(AUDIO.resolve()), "the folder is remembered between launches"
