"""Enlarge gives the tabs the graphs' room and gives it back as it was; nothing but the button moves it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.app.conftest import make_window, settings_file


def test_enlarge_gives_the_tabs_the_graphs_room_and_back(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    window.resize(1280, 800)
    QApplication.processEvents()
    tabs, plots = window.tabs, window.plots
    sizes, height = window.splitter.sizes(), tabs.height()
    assert plots.isVisible() and not tabs.enlarge.isChecked()
    window.tabs.setCurrentWidget(window.qa)              # switching tabs moves nothing
    QApplication.processEvents()
    assert window.splitter.sizes() == sizes and plots.isVisible()
    QTest.mouseClick(tabs.enlarge, Qt.MouseButton.LeftButton)
    QApplication.processEvents()
    assert not plots.isVisible() and tabs.height() > height + plots.minimumHeight()
    QTest.mouseClick(tabs.enlarge, Qt.MouseButton.LeftButton)
    QApplication.processEvents()
    assert plots.isVisible() and window.splitter.sizes() == sizes and tabs.height() == height
