"""The timed segments of a timestamps-mode run: start, end and text, one row per segment. Empty, it says why
in its middle (no run, no timestamps asked for, no window finished yet, no speech)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
)

from app.runs.record import RunRecord

HINT = "No timestamps in this run: turn Timestamps on and transcribe again."


def empty_reason(run: RunRecord | None) -> str:
    """Why a run has no segments to list ("" when it has some)."""
    if run is None:
        return "No run shown: transcribe, or pick a run above."
    if run.transcript.segments:
        return ""
    if run.live is not None:
        return "A live stream has no timed segments: its commits are in the SRT/VTT export."
    if not run.options.timestamps:
        return HINT
    if not run.finished_windows:
        return "Segments appear as each window finishes."
    if not run.transcript.shown_windows:
        return "No speech: Whisper's no-speech rule left out every window."
    return "The runner sent no timed segments for this run."


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
        self.empty_reason = empty_reason(None)
        self.setToolTip(self.empty_reason)

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
        self.empty_reason = empty_reason(run)
        self.setToolTip(self.empty_reason)
        self.viewport().update()

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self.rowCount() == 0 and self.empty_reason:
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().placeholderText().color())
            painter.drawText(self.viewport().rect().adjusted(12, 12, -12, -12),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.empty_reason)
            painter.end()


def _clock(seconds: float) -> str:
    m, s = divmod(seconds, 60)
    return f"{int(m):02d}:{s:05.2f}"
