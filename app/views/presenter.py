"""The presenter view: a live stream's text for an audience a few metres away, in a window of its own (full screen
on a second screen or a projector). Committed text dark, its tentative tail grey, the newest line always in view,
and one plain status line under it.

Keys: Ctrl + / Ctrl − change the text size, F11 full screen, Esc stops a running stream (and, once it ended,
leaves full screen)."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetrics, QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import QFrame, QLabel, QTextEdit, QVBoxLayout, QWidget

from app.fonts import transcript_font

# At least 40 px of cap height on a 1080-line screen reads from 2-3 m; scaled with the screen's height.
CAP_HEIGHT_PER_1080 = 40
TAIL_CHARS = 1200          # more than a full screen of text at the smallest size: the layout stays small
ZOOM_STEP = 1.15


def pixel_size_for_cap_height(cap_px: float, font=None) -> int:
    """The smallest pixel size of the transcript font whose capital letters are at least `cap_px` tall."""
    font = font or transcript_font(12)
    size = max(8, int(cap_px))
    while True:
        font.setPixelSize(size)
        if QFontMetrics(font).capHeight() >= cap_px:
            return size
        size += 1


class PresenterView(QWidget):
    stopRequested = Signal()
    closed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("WhisperKV Studio — live transcript")
        self.setStyleSheet("PresenterView { background: white; }")
        self.text = QTextEdit()
        self.text.setReadOnly(True)
        self.text.setFrameShape(QFrame.Shape.NoFrame)
        self.text.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.text.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.text.setStyleSheet("QTextEdit { background: white; color: #111; }")
        self.status_line = QLabel("ready")
        self.status_line.setStyleSheet("color: #37474f;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 32, 48, 24)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.status_line)
        self.running = False
        self._shown = ("", "")
        self.set_text_size(self.default_pixel_size())
        for keys, slot, what in ((QKeySequence.StandardKey.ZoomIn, self.zoom_in, "Larger text"),
                                 ("Ctrl+=", self.zoom_in, "Larger text"),
                                 (QKeySequence.StandardKey.ZoomOut, self.zoom_out, "Smaller text"),
                                 ("F11", self.toggle_full_screen, "Leave or enter full screen"),
                                 ("Esc", self._escape, "Stop the stream; once it ended, leave full screen")):
            QShortcut(QKeySequence(keys), self, activated=slot).setWhatsThis(what)   # Help ▸ Keyboard shortcuts
        self.resize(1280, 720)

    # --- size ----------------------------------------------------------------------------------------
    def default_pixel_size(self) -> int:
        screen = self.screen()
        lines = screen.geometry().height() if screen is not None else 1080
        return pixel_size_for_cap_height(CAP_HEIGHT_PER_1080 * max(lines, 1080) / 1080, transcript_font(12))

    def set_text_size(self, pixel_size: int) -> None:
        font = transcript_font(12)
        font.setPixelSize(max(8, pixel_size))
        self.text.setFont(font)
        status = transcript_font(12)
        status.setPixelSize(max(8, pixel_size // 2))
        self.status_line.setFont(status)
        self._render()

    def zoom_in(self) -> None:
        self.zoom(ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom(1 / ZOOM_STEP)

    def zoom(self, factor: float) -> None:
        size = self.text.font().pixelSize()
        new = round(size * factor)
        self.set_text_size(new if new != size else size + (1 if factor > 1 else -1))

    def cap_height(self) -> int:
        """Pixels from the baseline to the top of a capital letter of the text as drawn."""
        return QFontMetrics(self.text.font()).capHeight()

    def present(self) -> None:
        """Full screen on the screen it is on, and in front."""
        # Without a window manager (a bare X server, a kiosk) the full-screen state is only a hint: fill the screen.
        self.setGeometry(self.screen().geometry())
        self.showFullScreen()
        self.raise_()
        self.activateWindow()

    def toggle_full_screen(self) -> None:
        if self.isFullScreen():
            self.showNormal()
        else:
            self.present()

    # --- content -------------------------------------------------------------------------------------
    def show_text(self, committed: str, tentative: str) -> None:
        if (committed, tentative) != self._shown:
            self._shown = (committed, tentative)
            self._render()

    def show_status(self, line: str, running: bool) -> None:
        self.running = running
        self.status_line.setText(line)

    def _render(self) -> None:
        committed, tentative = self._shown
        if len(committed) + len(tentative) > TAIL_CHARS:
            cut = len(committed) + len(tentative) - TAIL_CHARS
            committed = "…" + committed[cut:].partition(" ")[2] if cut < len(committed) else ""
        self.text.setHtml(f"<span>{html.escape(committed)}</span>"
                          f"<span style='color:#9e9e9e'>{html.escape(tentative)}</span>")
        self.text.moveCursor(QTextCursor.MoveOperation.End)
        self.text.ensureCursorVisible()

    # --- keys and closing ----------------------------------------------------------------------------
    def _escape(self) -> None:
        if self.running:
            self.stopRequested.emit()
        elif self.isFullScreen():
            self.showNormal()

    def closeEvent(self, event) -> None:
        self.closed.emit()
        super().closeEvent(event)
