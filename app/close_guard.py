"""Closing the window with runs not yet saved in a session file asks Save / Discard / Cancel; Save writes
the session JSON (as File ▸ Export ▸ Session does) where the user picks. Scripted runs and tests never ask."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.errors import Failure
from app.runs import exports
from app.runs.session import Session
from app.settings import dialog_dir

OBJECT_NAME = "unsavedRunsQuestion"


def unsaved_runs(session: Session) -> list:
    return [r for r in session.runs if r.id > session.saved_through]


def may_close(parent: QWidget, session: Session, folder: str, show_failure) -> bool:
    """True when the window may close: nothing unsaved, Discard, or Save that wrote the file."""
    runs = unsaved_runs(session)
    if not runs:
        return True
    box = QMessageBox(QMessageBox.Icon.Question, "Unsaved runs",
                      f"{len(runs)} run{'s' if len(runs) > 1 else ''} of this session "
                      f"{'are' if len(runs) > 1 else 'is'} not saved in a session file.", parent=parent)
    box.setObjectName(OBJECT_NAME)
    box.setInformativeText("Save them before closing? Discard loses them.")
    box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                           | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Discard:
        return True
    if answer != QMessageBox.StandardButton.Save:
        return False
    path, _ = QFileDialog.getSaveFileName(parent, "Save session", str(Path(dialog_dir(folder)) / "session.json"),
                                          "JSON (*.json)")
    if not path:
        return False
    try:
        exports.write_session(session, path)
    except OSError as exc:
        show_failure(Failure(f"cannot write {path}: {exc.strerror or exc}", "pick a folder you can write to"))
        return False
    return True
