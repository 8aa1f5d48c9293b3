"""The main window's views come from one table (app/views/view_table.py): a toy view added as one class and one
row is placed where its row says, shows the run the window picks, and is refreshed while that run gains events;
the window's views are the table's."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel

from app.runs.record import RunRecord
from app.views import view_table
from core.decode.options import DecodeOptions
from tests.app.conftest import make_window, settings_file, wait_for


class ToyView(QLabel):
    """A view of a run: its id and how many times it was refreshed."""

    def __init__(self):
        super().__init__("no run")
        self.shown: list = []
        self.refreshed: list = []

    def show_run(self, run: RunRecord | None) -> None:
        self.shown.append(run)
        self.setText("no run" if run is None else f"run #{run.id}")

    def refresh(self, run: RunRecord) -> None:
        self.refreshed.append(run)


def test_a_toy_view_is_one_row(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(view_table, "VIEWS", [*view_table.VIEWS, view_table.ViewRow(
        "toy", lambda window: ToyView(), "tab:Toy", "toy")])
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    toy = window.toy
    assert window.tabs.tabText(window.tabs.count() - 1) == "Toy" and window.tabs.widget(window.tabs.count() - 1)
    run = window.session.new_run("toy.wav", DecodeOptions(), "local", {}, 1.0)
    window.run_picker.add(run)                           # as a run starts: the window shows it
    assert toy.shown[-1] is run and toy.text() == f"run #{run.id}"
    toy.refreshed.clear()
    window.runs.updated.emit(run)                        # the run gained events
    wait_for(lambda: toy.refreshed, "the toy view's refresh")
    assert toy.refreshed[-1] is run
    window.show_run(None)
    assert toy.shown[-1] is None and toy.text() == "no run"


def test_the_windows_views_are_the_tables():
    names = [row.name for row in view_table.VIEWS]
    assert names[:3] == ["banner", "quality", "transcript"] and "table" in names and "npu_view" in names
    tabs = [row.place[4:] for row in view_table.VIEWS if row.place.startswith("tab:")]
    assert tabs == ["Attention", "Tokens", "Segments", "Compare runs", "QA suite", "Live", "NPU profile"]


class ToyPicker(ToyView):
    """A toy view whose own signal picks a run for the window: its link is one row of view_table.links."""
    picked = Signal(object)


def test_a_toy_link_is_one_row(qtbot, tmp_path, monkeypatch):
    links = view_table.links
    monkeypatch.setattr(view_table, "VIEWS", [*view_table.VIEWS, view_table.ViewRow(
        "toy", lambda window: ToyPicker(), "tab:Toy", None)])
    monkeypatch.setattr(view_table, "links", lambda w: [*links(w), (w.toy.picked, w.show_run)])
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    run = window.session.new_run("toy.wav", DecodeOptions(), "local", {}, 1.0)
    window.toy.picked.emit(run)
    assert window.run is run
    window.toy.picked.emit(None)
    assert window.run is None


def test_a_links_slot_is_a_method_of_a_gui_thread_object(qtbot, tmp_path, monkeypatch):
    """A lambda connected to a worker's signal would run on the worker's thread: the table refuses it."""
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    assert all(isinstance(slot.__self__, QObject) for _, slot in view_table.links(window))
    monkeypatch.setattr(view_table, "links", lambda w: [(w.runs.updated, lambda run: w._on_run_updated(run))])
    with pytest.raises(TypeError, match="GUI-thread QObject"):
        view_table.link_views(window)
