"""File ▸ Export: one item each of app/runs/exports.py::EXPORTS (transcript TXT, SRT/VTT, token CSV, session JSON
and the graphs as PNG), and the Live tab's Export…. Works on whatever run is on display, finished, cancelled or
failed part-way. Each proposes a name that says the file and the run (`test_en-run3.srt`, `test_en-run4-live.json`),
in the folder of the last export, or the home folder the first time; the graphs' PNG carries the run's label above
them."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from app.errors import Failure
from app.runs import exports
from app.runs.token_names import name_of
from app.settings import dialog_dir
from core.file_formats import named


class ExportMenu(QObject):
    # A QObject living on the GUI thread, so that a signal linked to ask_live_export (app/views/view_table.py) runs it
    # there.
    def __init__(self, window):
        super().__init__(window)
        self.window = window

    def add_to(self, menu) -> None:
        sub = menu.addMenu("&Export")
        for fmt in exports.EXPORTS:
            action = QAction(f"{fmt.description} ({fmt.name.upper()})…", self.window)
            action.triggered.connect(lambda _=False, k=fmt.name: self.ask_and_export(k))
            sub.addAction(action)

    def ask_and_export(self, kind: str) -> None:
        w, fmt = self.window, named(exports.EXPORTS, kind)
        if fmt.of_run and w.run is None:
            w.show_failure(Failure("there is no run to export yet", "open audio and press Transcribe first"))
            return
        self._ask("Export", self.default_name(kind), fmt.file_filter, lambda path: self.export(kind, path))

    def ask_live_export(self) -> None:
        """The Live tab's Export…: the last stream's JSON document or its text."""
        w = self.window
        run = next((r for r in reversed(w.session.runs) if r.live is not None), None)
        stem = f"{Path(run.audio_name).stem}-run{run.id}-live" if run is not None else "live"
        self._ask("Export the live stream", f"{stem}.json", "Stream JSON (*.json);;Text (*.txt)", w.live_panel.export)

    def _ask(self, title: str, name: str, filters: str, write) -> None:
        w = self.window
        path, _ = QFileDialog.getSaveFileName(w, title, str(Path(dialog_dir(w.settings.export_dir)) / name), filters)
        if not path:
            return
        try:
            write(path)
        except OSError as exc:
            w.show_failure(Failure(f"cannot write {path}: {exc.strerror or exc}", "pick a folder you can write to"))
            return
        w.settings.export_dir = str(Path(path).parent)
        w.status.showMessage(f"Exported {path}", 5000)

    def default_name(self, kind: str) -> str:
        run, fmt = self.window.run, named(exports.EXPORTS, kind)
        stem = Path(run.audio_name).stem + f"-run{run.id}" if run and fmt.of_run else "session"
        return stem + fmt.suffix

    def export(self, kind: str, path: str) -> Path:
        """Write one export without asking (used by the menu, automation and tests)."""
        w = self.window
        return exports.export(kind, exports.Exported(w.session, w.run, name_of, self._graphs_png), path)

    def _graphs_png(self, path: Path) -> None:
        w = self.window
        if not w.plots.save_png(str(path), w.run.label() if w.run is not None else ""):
            raise OSError(f"the PNG could not be written to {path}")
