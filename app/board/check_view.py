"""Check board in the device panel, for a tester to read: a legend of the marks, one row per rung of the doctor's
ladder (its mark, what decided it, its warnings and its fix; on hover, what the rung checks and what a real board must
show, from the rung table, device/doctor/ladder.py), and buttons that write doctor.html and doctor.json to a
folder the user picks (device/doctor/report.py, as `whisperkv doctor --out`) and open the page. A fix that says
to attach doctor.html links to the same writing."""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.settings import AppSettings, dialog_dir
from app.views.viewer import open_in_viewer
from device.doctor.checkup import MARKS, STATUSES, Rung
from device.doctor.ladder import RUNGS
from device.doctor.report import write_report

# What each mark says, in the legend (every status of the ladder has one: a KeyError here is a mark left out).
MEANING = {"pass": "passed", "warn": "warns: fine here, its line says why",
           "fail": "failed: the ladder stops there, with its fix", "not-run": "not run: a rung before it failed"}
PAGE = "doctor.html"
WRITE_LINK = "write:doctor.html"


def legend_text() -> str:
    """One mark a line, then what hovering shows."""
    return "\n".join([f"{MARKS[s]} {MEANING[s]}" for s in STATUSES] + ["Hover a rung for what it checks."])


def rung_tip(rung: Rung) -> str:
    """What the rung checks and what a real board must show, from the rung table."""
    return f"{rung.name}: checks {rung.checks}.\nA real board must show: {rung.board_must_show}."


def _e(text) -> str:
    return html.escape(str(text), quote=False)


def _fix_html(fix: str) -> str:
    """The fix, with doctor.html a link that writes it (the fix of a board that computes other numbers)."""
    text = _e(fix)
    if PAGE not in fix:
        return text
    return text.replace(PAGE, f"<a href='{WRITE_LINK}'>{PAGE}</a>", 1) + " (click doctor.html to write it)"


class CheckView(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.settings: AppSettings | None = None    # the window's: the last export folder, kept between launches
        self.report: dict | None = None              # the last Check board report (app/board/check.py)
        self.last: Path | None = None                # the doctor.html written last
        self.legend = QLabel(legend_text())
        self.legend.setWordWrap(True)
        self.legend.setToolTip("The doctor's marks, as `whisperkv doctor` prints them (docs/doctor.md)")
        self.marks: list[QLabel] = []
        self.texts: list[QLabel] = []
        rows = QGridLayout()
        rows.setColumnStretch(1, 1)
        for i, rung in enumerate(RUNGS):
            mark, text = QLabel(""), QLabel(rung.name)
            text.setWordWrap(True)
            text.setTextFormat(Qt.TextFormat.RichText)
            text.linkActivated.connect(self._on_link)
            for label in (mark, text):
                label.setToolTip(rung_tip(rung))
                label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            rows.addWidget(mark, i, 0)
            rows.addWidget(text, i, 1)
            self.marks.append(mark)
            self.texts.append(text)
        self.write_button = QPushButton("Write doctor.html…")
        self.write_button.setToolTip("Write doctor.html and doctor.json, the report to attach to a bug, to a folder")
        self.open_button = QPushButton("Open doctor.html")
        self.where = QLabel("")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.addWidget(self.write_button)
        buttons.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.legend)
        layout.addLayout(rows)
        layout.addLayout(buttons)
        layout.addWidget(self.where)
        self.write_button.clicked.connect(self.write_dialog)
        self.open_button.clicked.connect(self.open)
        self.begin()

    # --- the ladder --------------------------------------------------------------------------------

    def begin(self) -> None:
        """A check starts: every rung waiting, nothing to write yet."""
        self.report = None
        for rung, mark, text in zip(RUNGS, self.marks, self.texts):
            mark.setText("")
            text.setText(f"{rung.name} <span style='color:gray'>…</span>")
        self.write_button.setEnabled(False)
        self.open_button.setEnabled(self.last is not None)

    def show_rung(self, index: int, status: int) -> None:
        """The rung just decided, its mark (the checker's signal: indices into the ladder's names and statuses)."""
        self.marks[index].setText(MARKS[STATUSES[status]])

    def show_report(self, report: dict) -> None:
        """Every rung's mark, what decided it, its warnings as sentences and a failed rung's fix."""
        self.report = report
        for row, r in enumerate(report["rungs"]):
            figures = r.get("figures") or {}
            parts = [f"<b>{_e(r['name'])}</b> {_e(figures.get('decided_by') or '')}"]
            parts += [f"! {_e(note)}" for note in figures.get("warnings") or ()]
            if r["status"] == "fail" and r.get("fix"):
                parts.append(f"fix: {_fix_html(r['fix'])}")
            self.marks[row].setText(MARKS[r["status"]])
            self.texts[row].setText("<br>".join(parts))
        self.write_button.setEnabled(True)

    # --- doctor.html -------------------------------------------------------------------------------

    def write_dialog(self) -> Path | None:
        """Ask for a folder (where the last export went, the home folder the first time) and write the report there."""
        start = dialog_dir(self.settings.export_dir if self.settings is not None else "")
        folder = QFileDialog.getExistingDirectory(self, "Write doctor.html and doctor.json to", start)
        return self.write(Path(folder)) if folder else None

    def write(self, folder: Path) -> Path | None:
        if self.report is None:
            return None
        try:
            self.last = write_report(folder, self.report, self.report.get("runs") or {}, self.report.get("logs"))
        except OSError as exc:
            self.where.setText(f"doctor.html could not be written to {folder}: {exc.strerror or exc}")
            return None
        if self.settings is not None:
            self.settings.export_dir = str(folder)
        self.where.setText(f"Written: {self.last} and doctor.json beside it.")
        self.open_button.setEnabled(True)
        return self.last

    def open(self) -> bool:
        """Open doctor.html in the desktop's viewer; when none starts, say where it is."""
        if self.last is None:
            return False
        return open_in_viewer(self.last, self.where, "doctor.html")

    def _on_link(self, link: str) -> None:
        if link == WRITE_LINK:
            self.write_dialog()
