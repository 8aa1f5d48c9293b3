"""The run picker above the transcript: every run of the session by its label (a stream's counts its passes as they
come); picking one, or the same one again, asks the window to show it."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox

from app.runs.record import RunRecord
from app.runs.session import Session


class RunPicker(QComboBox):
    picked = Signal(object)        # RunRecord | None

    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.setMinimumWidth(300)
        self.currentIndexChanged.connect(self._pick)
        self.activated.connect(self._pick)      # the same run picked again: its audio again

    def add(self, run: RunRecord) -> None:
        self.addItem(run.label(), run.id)
        self.setCurrentIndex(self.count() - 1)  # shows it

    def relabel(self, run: RunRecord) -> None:
        """Called with every batch of a run's events: only a label that changed is set again."""
        index, label = self.findData(run.id), run.label()
        if index >= 0 and self.itemText(index) != label:
            self.setItemText(index, label)

    def show_none(self, *_) -> None:
        """Show no run (new audio was opened): every run stays listed, to be picked again."""
        self.setCurrentIndex(-1)

    def select(self, run: RunRecord) -> None:
        index = self.findData(run.id)
        if index == self.currentIndex():
            self._pick(index)
        self.setCurrentIndex(index)

    def _pick(self, index: int) -> None:
        self.picked.emit(self.session.by_id(self.itemData(index)))
