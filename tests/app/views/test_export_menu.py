"""Exports name the run and the file, and start in the folder of the last export (home the first time): the
Live tab's Export… proposed `live.json` in the working directory; the graphs' PNG says which run it shows."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from app.runs import exports
from app.runs.live import end_live, start_live
from core.decode.events import EncodedEvent
from core.file_formats import text_writer
from tests.app.audio.test_panel import Dialogs
from tests.app.conftest import make_window, settings_file
from tests.app.runs.test_exports import make_run, token


def test_the_live_export_proposes_the_runs_name_at_home_then_in_the_last_folder(qtbot, tmp_path, monkeypatch):
    dialogs = Dialogs(monkeypatch)
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    live = make_run(window.session, [])
    start_live(live, "clip.wav")
    end_live(live, {"end": "stopped", "text": "hello", "commits": []})
    window.live_panel.finish({"end": "stopped", "text": "hello"})
    window.live_panel.export_button.click()
    assert dialogs.started == [str(Path.home() / f"clip-run{live.id}-live.json")]

    written = tmp_path / "out" / "mine.txt"
    written.parent.mkdir()
    dialogs.answer = (str(written), "")
    window.live_panel.export_button.click()
    assert written.read_text().strip() == "hello"
    window.live_panel.export_button.click()
    assert dialogs.started[-1] == str(written.parent / f"clip-run{live.id}-live.json")


def test_the_graphs_png_is_named_for_the_run_and_carries_its_label(qtbot, tmp_path, monkeypatch):
    dialogs = Dialogs(monkeypatch)
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    run = make_run(window.session, [EncodedEvent(0, 900.0, "en")] + [token(0, i, 100 + i, " a") for i in range(5)])
    window.run_picker.add(run)
    window.exports.ask_and_export("png")
    assert dialogs.started == [str(Path.home() / f"clip-run{run.id}.png")]
    path = tmp_path / "graphs.png"
    window.exports.export("png", str(path))
    image, graphs = QImage(str(path)), window.plots.grab()
    assert image.height() > graphs.height() and image.width() == graphs.width()
    band = [image.pixelColor(x, y).lightness() for x in range(0, image.width() // 3) for y in range(4, 20)]
    assert min(band) < 128, "a line of text above the graphs"


def test_a_toy_export_is_one_row_in_the_menu_and_its_dialog(qtbot, tmp_path, monkeypatch):
    """File ▸ Export is generated from app/runs/exports.py::EXPORTS, rows like the QA report's formats
    (core/file_formats.py): a toy row and its writer are an item of the menu, the save dialog's filter and a file."""
    toy = exports.RunExport("md", ".md", text_writer(lambda exported: f"# run {exported.run.id}\n"), "Notes",
                            "Markdown")
    monkeypatch.setattr(exports, "EXPORTS", [*exports.EXPORTS, toy])
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(
        lambda parent, title, start="", filters="": asked.append((start, filters)) or (str(tmp_path / "n.md"), "")))
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    menu = next(a.menu() for a in window.menuBar().actions() if a.menu() and a.text() == "&File")
    items = [a.text() for a in next(a.menu() for a in menu.actions() if a.text() == "&Export").actions()]
    assert items == ["Transcript (TXT)…", "Subtitles (SRT)…", "Subtitles (VTT)…", "Token table (CSV)…",
                     "Session (JSON)…", "Graphs (PNG)…", "Notes (MD)…"]
    run = make_run(window.session, [EncodedEvent(0, 900.0, "en")] + [token(0, i, 100 + i, " a") for i in range(3)])
    window.run_picker.add(run)
    window.exports.ask_and_export("md")
    assert asked == [(str(Path.home() / f"clip-run{run.id}.md"), "Markdown (*.md)")]
    assert (tmp_path / "n.md").read_text() == f"# run {run.id}\n"
