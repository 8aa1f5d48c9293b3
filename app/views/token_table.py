"""The token table widget; selecting a row tells the plots, and the plots can select a row; clicking a row
names its step (stepClicked), which plays that span."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from app.runs.record import RunRecord
from app.views.token_table_model import TokenTableModel


class TokenTable(QTableView):
    stepSelected = Signal(int)
    stepClicked = Signal(int)      # a mouse click, not keyboard navigation: plays the step's audio

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_ = TokenTableModel(self)
        self.setModel(self.model_)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(20)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        self.selectionModel().currentRowChanged.connect(self._on_current_row)
        self.clicked.connect(lambda index: self.stepClicked.emit(index.row()))
        self._quiet = False

    def set_run(self, run: RunRecord | None) -> None:
        self.model_.set_run(run)

    def sync(self) -> None:
        self.model_.sync()

    def show_run(self, run: RunRecord | None) -> None:      # a run view (app/views/view_table.py)
        self.set_run(run)

    def refresh(self, run: RunRecord) -> None:
        self.sync()

    def row_count(self) -> int:
        return self.model_.rowCount()

    def select_step(self, x: int) -> None:
        """Select a row on behalf of a plot, without echoing it back."""
        if not 0 <= x < self.model_.rowCount():
            return
        self._quiet = True
        index = self.model_.index(x, 0)
        self.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.scrollTo(index)
        self._quiet = False

    def _on_current_row(self, current, _previous) -> None:
        if current.isValid() and not self._quiet:
            self.stepSelected.emit(current.row())
