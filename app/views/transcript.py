"""The live transcript: each token tinted by its probability, and once its window is done and the run has
attention, each word by its probability (as whisper.cpp's --print-colors); EOT shown as an explicit marker.
Clicking a word or the marker names its step (stepClicked), which plays that span.

A live stream's run shows its committed text with the tentative tail grey instead: its passes' hypotheses and
their EOT marks stay in the token table."""
from __future__ import annotations

import bisect
import html
import math
from functools import lru_cache

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextEdit

from app.background import TaskRunner
from app.fonts import transcript_font
from app.runs.record import RunRecord
from app.runs.token_names import EOT_MARK, is_eot
from app.runs.words import window_word_rows

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
    stepClicked = Signal(int)      # the run-wide step (TokenRow.x) of a clicked word, token or EOT marker

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(transcript_font(15))
        self.setPlaceholderText("The transcript grows here token by token.")
        self.run: RunRecord | None = None
        self._rows_shown = 0
        self._done_shown = 0
        self._eot_windows: set[int] = set()
        self._live_shown: tuple[str, str] | None = None
        self._starts: list[int] = []     # document position where each shown piece starts ...
        self._ends: list[int] = []       # ... and ends
        self._steps: list[int] = []      # ... and its step
        self._marker_fmt = QTextCharFormat()
        self._marker_fmt.setForeground(QColor("#ffffff"))
        self._marker_fmt.setBackground(QColor("#555555"))
        self._marker_fmt.setFontWeight(QFont.Weight.Bold)
        self.tinted: set[int] = set()    # windows whose words are tinted
        self.tasks = TaskRunner(self)    # word timings of a long window take longer than a frame

    def set_run(self, run: RunRecord | None) -> None:
        self.run = run
        self.clear()
        self._rows_shown = self._done_shown = 0
        self._eot_windows = set()
        self._live_shown = None
        self._starts, self._ends, self._steps = [], [], []
        self.tinted = set()
        self.sync()

    def show_run(self, run: RunRecord | None) -> None:      # a run view (app/views/view_table.py)
        self.set_run(run)

    def refresh(self, run: RunRecord) -> None:
        self.sync()

    def sync(self) -> None:
        if self.run is None:
            return
        if self.run.live is not None:
            self._sync_live()
            return
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()  # one relayout per sync, not one per token
        for row in self.run.rows[self._rows_shown:]:
            ev = row.event
            if is_eot(ev.token):
                self._eot_windows.add(ev.window)
                self._insert_marker(cursor, row.x)
            elif not ev.is_special and ev.text:
                start = cursor.position()
                cursor.insertText(ev.text, token_format(math.exp(ev.logprob)))
                self._remember(start, cursor.position(), row.x)
        self._rows_shown = len(self.run.rows)
        finished = self.run.finished_windows
        for w in finished[self._done_shown:]:
            if w.reason == "eot" and w.window not in self._eot_windows:
                self._eot_windows.add(w.window)
                self._insert_marker(cursor, None)
            self._tint_words(w.window)
        self._done_shown = len(finished)
        cursor.endEditBlock()
        self.setTextCursor(cursor)
        self.ensureCursorVisible()

    def _sync_live(self) -> None:
        live = self.run.live
        shown = (live.get("text", ""), live.get("tentative", ""))
        if shown == self._live_shown:
            return
        committed, tentative = shown
        if not committed:
            tentative = tentative.lstrip()
        self._live_shown = shown
        self.setHtml(f"<span>{html.escape(committed)}</span>"
                     f"<span style='color:#9e9e9e'>{html.escape(tentative)}</span>")
        self.moveCursor(QTextCursor.MoveOperation.End)
        self.ensureCursorVisible()

    def _insert_marker(self, cursor: QTextCursor, x: int | None) -> None:
        cursor.insertText(" ", QTextCharFormat())
        start = cursor.position()
        cursor.insertText(EOT_MARK, self._marker_fmt)
        if x is not None:
            self._remember(start, cursor.position(), x)

    def _remember(self, start: int, end: int, x: int) -> None:
        self._starts.append(start)
        self._ends.append(end)
        self._steps.append(x)

    def _tint_words(self, window: int) -> None:
        """Re-tint a finished window's pieces by word probability once its words are known (attention on),
        computing them off the UI thread the first time."""
        run = self.run
        if not run.options.wants_attention:
            return
        if window in run.derived.get("words", {}):
            self._apply_word_tint(window)
            return
        self.tasks.start(window_word_rows, run, window, on_done=lambda _: self._words_ready(run, window),
                         on_failed=lambda _: None)   # the per-token tint stays: a nicety is not an error

    def _words_ready(self, run: RunRecord, window: int) -> None:
        if run is self.run:
            self._apply_word_tint(window)

    def _apply_word_tint(self, window: int) -> None:
        where = dict(zip(self._steps, zip(self._starts, self._ends)))
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()  # one relayout for the window, not one per word
        for word, xs in window_word_rows(self.run, window):
            spans = [where[x] for x in xs if x in where]
            if not spans:
                continue
            cursor.setPosition(min(a for a, _ in spans))
            cursor.setPosition(max(b for _, b in spans), QTextCursor.MoveMode.KeepAnchor)
            cursor.setCharFormat(token_format(word.probability))
        cursor.endEditBlock()
        self.tinted.add(window)

    # --- clicks ------------------------------------------------------------------------------

    def step_at(self, position: int) -> int | None:
        """The step whose piece holds the character at document `position`."""
        i = bisect.bisect_right(self._starts, position) - 1
        return self._steps[i] if i >= 0 and position < self._ends[i] else None

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        if event.button() != Qt.MouseButton.LeftButton or self.textCursor().hasSelection():
            return   # a drag selects text; only a plain click plays
        point = event.position().toPoint()
        cursor = self.cursorForPosition(point)
        position = cursor.position()
        if self.cursorRect(cursor).center().x() > point.x():
            position -= 1            # the click fell on the character before the cursor
        x = self.step_at(position)
        if x is not None:
            self.stepClicked.emit(x)

    def plain_text(self) -> str:
        return self.toPlainText()
