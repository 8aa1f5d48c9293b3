"""The timed segments of a timestamps-mode run: start, end and text, one row per segment."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
)

from app.runs.record import RunRecord

HINT = "No timestamps in this run: turn Timestamps on and transcribe again."


class SegmentsView(QTableWidget):
    def __init__(self, parent=None):
        super().__init__(0, 3, parent)
        self.setHorizontalHeaderLabels(["start", "end", "text"])
        self.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().hide()
        self.segments: list[dict] = []
        self._shown: tuple = ()
        self.setToolTip(HINT)

    def show_run(self, run: RunRecord | None) -> None:      # a run view (app/views/view_table.py)
        self.set_run(run)

    def refresh(self, run: RunRecord) -> None:
        self.set_run(run)

    def set_run(self, run: RunRecord | None) -> None:
        """Cheap to call on every refresh: segments only change when a window finishes."""
        key = (id(run), len(run.finished_windows)) if run is not None else ()
        if key == self._shown:
            return
        self._shown = key
        segments = run.transcript.segments if run is not None else []
        self.segments = segments
        self.setRowCount(len(segments))
        for i, g in enumerate(segments):
            for col, text in enumerate((_clock(g["start"]), _clock(g["end"]), g["text"].strip())):
                item = QTableWidgetItem(text)
                if col < 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(i, col, item)
        self.setToolTip("" if segments else HINT)


def _clock(seconds: float) -> str:
    m, s = divmod(seconds, 60)
    return f"{int(m):02d}:{s:05.2f}"
