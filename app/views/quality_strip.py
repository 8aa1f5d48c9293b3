"""Beside the stop banner: the window-quality signals of the run's verdict window (compression ratio, average
logprob, no-speech probability, mean entropy) against openai-whisper's thresholds, the temperature and any
fallback. They ride on the done event (`DoneEvent.quality`, a WindowQuality) when the runner sends them;
a run without them shows nothing here, in the room the last run's took (none while no run is shown)."""
from __future__ import annotations

import math
from html import escape

from PySide6.QtGui import QTextDocument, QTextOption
from PySide6.QtWidgets import QLabel

from app.runs.record import RunRecord
from core.decode.events import DoneEvent
from core.decode.quality import COMPRESSION_RATIO_THRESHOLD as COMPRESSION_RATIO_MAX
from core.decode.quality import LOGPROB_THRESHOLD as LOGPROB_MIN
from core.decode.quality import NO_SPEECH_THRESHOLD as NO_SPEECH_MAX

PASS_COLOR, FAIL_COLOR = "#1b5e20", "#b71c1c"
PADDING_X = 12          # the style sheet's padding, 6 px a side


def window_quality(run: RunRecord):
    """The quality of the window the verdict is about: the first one that failed a check, else the last
    one that has any; None when the runner sent none."""
    qualities = [q for e in run.events if isinstance(e, DoneEvent) and (q := getattr(e, "quality", None)) is not None]
    failing = [q for q in qualities if _failures(q)]
    if failing:
        return failing[0]
    return qualities[-1] if qualities else None


def _failures(q) -> list[str]:
    failures = getattr(q, "failures", None)
    return list(failures()) if callable(failures) else []


def signals(q) -> list[tuple[str, str, bool | None]]:
    """(name, value, passed) of each signal; passed is None where there is no threshold."""
    return [
        ("compression", f"{q.compression_ratio:.2f} (≤ {COMPRESSION_RATIO_MAX})", q.compression_ratio <= COMPRESSION_RATIO_MAX),
        ("avg logprob", f"{q.avg_logprob:.2f} (≥ {LOGPROB_MIN})", q.avg_logprob >= LOGPROB_MIN),
        ("no-speech", f"{q.no_speech_prob:.2f} (≤ {NO_SPEECH_MAX})", q.no_speech_prob <= NO_SPEECH_MAX),
        ("entropy", f"{q.mean_entropy:.2f}", None),
    ]


def describe(q) -> str:
    """Rich text: each signal with ✓ or ✗, then the temperature and the fallbacks that fired."""
    cells = []
    for name, value, passed in signals(q):
        mark = "" if passed is None else (" ✓" if passed else " ✗")
        color = "#333" if passed is None else PASS_COLOR if passed else FAIL_COLOR
        # A signal never breaks across lines (it wrapped mid-word): the strip wraps between signals only.
        # (its spaces kept together, and its hyphen a non-breaking one)
        name = escape(name).replace("-", "\u2011")
        cells.append(f'<span style="color:{color}; white-space:nowrap">{name} {escape(value)}{mark}</span>')
    extra = f"T {q.temperature:.1f}"
    if q.fallbacks:
        extra += " · fallback: " + escape(", ".join(q.fallbacks))
    return "&nbsp;· ".join(cells) + f'<br><span style="color:#555">{extra}</span>'


class QualityStrip(QLabel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setStyleSheet("QLabel { background: #f5f5f5; padding: 4px 6px; border-radius: 4px; }")
        self.quality = None
        self.hide()

    def widest_signal(self) -> int:
        """Pixels the widest signal takes, as drawn, with the strip's padding: narrower, it would wrap mid-word."""
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WordWrap)        # at the breaks the text allows, never inside one
        doc.setDefaultTextOption(option)
        doc.setHtml(self.text())
        doc.setTextWidth(1)
        return math.ceil(doc.idealWidth()) + PADDING_X + 4

    def keeps_room(self) -> bool:
        return self.sizePolicy().retainSizeWhenHidden()

    def _keep_room(self, keep: bool) -> None:
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(keep)
        self.setSizePolicy(policy)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._hold_height()

    def _hold_height(self) -> None:
        """Wrapped text needs more lines when narrow: ask for them, so the last line is never cut."""
        self.setMinimumHeight(self.heightForWidth(self.width()) if self.text() else 0)

    def refresh(self, run: RunRecord) -> None:      # a run view (app/views/view_table.py)
        self.show_run(run)

    def show_run(self, run: RunRecord | None) -> None:
        q = window_quality(run) if run is not None else None
        keep_room = run is not None and bool(self.text())
        if q is self.quality and (q is None) == self.isHidden() and keep_room == self.keeps_room():
            return
        self.quality = q
        if q is None:
            # A run without them keeps the room the last one's took, blank: a live stream has none until its first
            # pass, and giving the room back as it started and taking it again then laid out and drew every pane
            # below twice. The hidden text keeps the room's size; it is never drawn.
            self._keep_room(keep_room)
            if not keep_room:
                self.setText("")
            self.hide()
            return
        failures = _failures(q)
        self.setText(describe(q))
        self.setMinimumWidth(self.widest_signal())
        self._hold_height()
        self.setToolTip("Window quality against openai-whisper's thresholds"
                        + (": " + "; ".join(failures) if failures else ""))
        self.show()
