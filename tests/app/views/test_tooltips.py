"""Every button that shows only a symbol (■, ▶, …) says what it does in its tooltip."""
from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton

from tests.app.conftest import make_window, settings_file


def test_every_icon_only_button_has_a_tooltip(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    buttons = window.findChildren(QAbstractButton)
    icon_only = [b for b in buttons if not any(c.isalpha() for c in b.text()) and b.isVisibleTo(window)]
    assert any(b is window.audio.stop_play_button for b in icon_only)
    assert [b.text() or b.objectName() for b in icon_only if not b.toolTip().strip()] == []
