"""Where the QA tab's report goes: written to a default folder when a suite run ends (under the studio's
data folder, one folder per run), or to one the user picks; "Open report" starts the HTML viewer and,
when none starts, says where the file is in text that can be selected and copied."""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QStandardPaths, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

from app.errors import failure_of
from app.settings import dialog_dir
from app.views.viewer import open_in_viewer
from core.errors import WhisperKVError
from core.qa.report import write_reports
from core.qa.run import SuiteResult


def default_report_dir(suite_name: str) -> Path:
    """<the studio's data folder>/qa-reports/<suite>-<date-time>, e.g. ~/.local/share/WhisperKV/WhisperKV
    Studio/qa-reports/bundled-20261126-081500 on Linux."""
    data = Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
                or Path.home() / ".whisperkv")
    name = re.sub(r"[^\w.-]+", "-", suite_name or "suite").strip("-") or "suite"
    return data / "qa-reports" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"


class ReportBox(QWidget):
    failed = Signal(object)          # Failure: the report could not be written

    def __init__(self, result_of: Callable[[], SuiteResult], parent=None):
        super().__init__(parent)
        self.result_of = result_of
        self.last: Path | None = None
        self.where = QLabel("")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open report")
        self.write_button = QPushButton("Write report…")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.where, 1)
        layout.addWidget(self.open_button)
        layout.addWidget(self.write_button)
        self.open_button.clicked.connect(self.open)
        self.write_button.clicked.connect(self._ask)
        self.set_ready(False)

    def set_ready(self, has_results: bool) -> None:
        self.write_button.setEnabled(has_results)
        self.open_button.setEnabled(self.last is not None)

    def write(self, out: str | Path) -> Path:
        """Every format of the QA report (core/qa/report.py::FORMATS: qa.json, qa.csv, qa.html) in `out`; returns
        the HTML path, the one "Open report" opens."""
        self.last = write_reports(self.result_of(), out)["html"]
        self.where.setText(f"Report: {self.last}")
        self.open_button.setEnabled(True)
        return self.last

    def write_default(self) -> Path | None:
        """At the end of a suite run: the report in its default folder (None, and a Failure, if it cannot be)."""
        try:
            return self.write(default_report_dir(self.result_of().suite))
        except (WhisperKVError, OSError) as exc:
            self.failed.emit(failure_of(exc))
            return None

    def open(self) -> bool:
        """Start the viewer; when none starts, say where the report is."""
        if self.last is None:
            return False
        return open_in_viewer(self.last, self.where, "the report")

    def _ask(self) -> None:
        # Starts in the folder picked last (the home folder the first time), never the working directory.
        out = QFileDialog.getExistingDirectory(self, "Write the QA report to", dialog_dir(getattr(self, "folder", "")))
        if out:
            self.folder = out
            try:
                self.write(out)
            except (WhisperKVError, OSError) as exc:
                self.failed.emit(failure_of(exc))
                return
            self.open()
