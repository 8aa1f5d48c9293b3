"""Table model over a run's token rows: step, token, text, logprob, p(EOT), top alternatives, cache_len, ms."""
from __future__ import annotations

import math

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QColor

from app.runs.record import RunRecord, TokenRow
from app.runs.token_names import name_of, step_label

COLUMNS = ("step", "token", "text", "logprob", "p(EOT)", "top alternatives", "cache_len", "runner ms", "host ms")


def probability_color(p: float) -> QColor:
    """Red for unsure tokens through amber to green for confident ones; shared with the transcript tint."""
    p = max(0.0, min(1.0, p))
    hue = int(120 * p)  # 0 = red, 120 = green
    return QColor.fromHsv(hue, 200, 150)


class TokenTableModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.run: RunRecord | None = None
        self._shown = 0

    def set_run(self, run: RunRecord | None) -> None:
        self.beginResetModel()
        self.run = run
        self._shown = len(run.rows) if run else 0
        self.endResetModel()

    def sync(self) -> None:
        """Append rows the run gained since the last sync (cheap: no reset while decoding)."""
        if self.run is None or len(self.run.rows) == self._shown:
            return
        first, last = self._shown, len(self.run.rows) - 1
        self.beginInsertRows(QModelIndex(), first, last)
        self._shown = last + 1
        self.endInsertRows()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shown

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.run is None:
            return None
        row: TokenRow = self.run.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell_text(self.run.rows, index.row(), index.column())
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 2:
            return probability_color(math.exp(row.event.logprob))
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() not in (2, 5):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def cell_text(rows: list[TokenRow], i: int, column: int) -> str:
    row = rows[i]
    ev = row.event
    text = step_label([r.event for r in rows[max(0, i - 4):i + 5]], min(i, 4)) if column == 2 else ""
    values = (
        str(row.x),
        str(ev.token),
        text,
        f"{ev.logprob:.3f}",
        f"{ev.eot_prob:.2e}",
        "  ".join(f"{name_of(t)!r} {math.exp(lp):.2f}" for t, lp in ev.top),
        str(ev.cache_len),
        f"{ev.ms:.1f}",
        f"{row.host_ms:.1f}",
    )
    return values[column]
