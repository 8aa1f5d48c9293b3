"""The live transcript: each token tinted by its probability, EOT shown as an explicit marker."""
from __future__ import annotations

import math
from functools import lru_cache

from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextEdit

from app.fonts import transcript_font
from app.runs.record import RunRecord
from app.runs.token_names import EOT_MARK, is_eot

TINT_LEVELS = 20


def tint(p: float) -> QColor:
    """Background behind a token: pale red when unsure, pale green when confident."""
    p = max(0.0, min(1.0, p))
    return QColor.fromHsv(int(120 * p), 70, 255)


@lru_cache(maxsize=None)
def _format(level: int) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setBackground(tint(level / TINT_LEVELS))
    return fmt


def token_format(p: float) -> QTextCharFormat:
    """Shared formats for a few probability levels: a format per token makes the document slow to grow."""
    return _format(round(max(0.0, min(1.0, p)) * TINT_LEVELS))


class TranscriptView(QTextEdit):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(transcript_font(15))
        self.setPlaceholderText("The transcript grows here token by token.")
        self.run: RunRecord | None = None
        self._rows_shown = 0
        self._done_shown = 0
        self._eot_windows: set[int] = set()

    def set_run(self, run: RunRecord | None) -> None:
        self.run = run
        self.clear()
        self._rows_shown = self._done_shown = 0
        self._eot_windows = set()
        self.sync()

    def sync(self) -> None:
        if self.run is None:
            return
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()  # one relayout per sync, not one per token
        for row in self.run.rows[self._rows_shown:]:
            ev = row.event
            if is_eot(ev.token):
                self._eot_windows.add(ev.window)
                self._insert_marker(cursor)
            elif not ev.is_special and ev.text:
                cursor.insertText(ev.text, token_format(math.exp(ev.logprob)))
        self._rows_shown = len(self.run.rows)
        finished = self.run.finished_windows
        for w in finished[self._done_shown:]:
            if w.reason == "eot" and w.window not in self._eot_windows:
                self._eot_windows.add(w.window)
                self._insert_marker(cursor)
        self._done_shown = len(finished)
        cursor.endEditBlock()
        self.setTextCursor(cursor)
        self.ensureCursorVisible()

    def _insert_marker(self, cursor: QTextCursor) -> None:
        fmt = QTextCharFormat()
        fmt.setForeground(QColor("#ffffff"))
        fmt.setBackground(QColor("#555555"))
        fmt.setFontWeight(QFont.Weight.Bold)
        cursor.insertText(" ", QTextCharFormat())
        cursor.insertText(EOT_MARK, fmt)

    def plain_text(self) -> str:
        return self.toPlainText()
