"""A plot title that stays inside its plot at any width: its " · "-separated parts go on as many lines as
they need, a part too long for a line is cut with "…", and the tooltip holds the whole title.

pyqtgraph's title label asks for the width of its text, so an over-long title widens the plot past its
widget and pushes the right axis and the legend out of view; fitted, it never asks for more than it has."""
from __future__ import annotations

from html import escape

import pyqtgraph as pg

SEPARATOR = " · "
NOTE_STYLE = "font-size:9pt"
MARGIN = 16          # the plot item's own margins around the title


class FittedTitle:
    def __init__(self, plot: pg.PlotWidget):
        self.plot = plot
        self.head = self.note = ""
        self._shown: tuple[str, str, int] | None = None

    def set(self, head: str, note: str = "") -> None:
        self.head, self.note = head, note
        self.fit()

    def fit(self) -> None:
        item = self.plot.getPlotItem()
        if item is None:         # the plot is closing
            return
        axes = sum(item.getAxis(side).width() for side in ("left", "right") if item.getAxis(side).isVisible())
        width = max(60, int(self.plot.width() - axes - MARGIN))
        if self._shown == (self.head, self.note, width):
            return
        self._shown = (self.head, self.note, width)
        lines = [escape(line) for line in self._lines(self.head, width, "")]
        lines += [f"<span style='{NOTE_STYLE}'>{escape(line)}</span>"
                  for line in self._lines(self.note, width, NOTE_STYLE)]
        item.setTitle("<br>".join(lines))
        height = item.titleLabel.item.boundingRect().height()   # setTitle fixes one line's 30 px
        item.titleLabel.setMaximumHeight(height)
        item.layout.setRowFixedHeight(0, height)
        whole = self.head + (f"\n{self.note}" if self.note else "")
        item.titleLabel.setToolTip(whole)

    def _lines(self, text: str, width: float, style: str) -> list[str]:
        """Parts packed greedily into lines no wider than `width`; a lone part too wide is cut."""
        lines: list[str] = []
        for part in (p for p in text.split(SEPARATOR) if p):
            if lines and self._width(lines[-1] + SEPARATOR + part, style) <= width:
                lines[-1] += SEPARATOR + part
                continue
            while len(part) > 1 and self._width(part, style) > width:
                part = part[:-2] + "…"
            lines.append(part)
        return lines

    def _width(self, text: str, style: str) -> float:
        """Measured as the title label will draw it (its own font size and markup around ours)."""
        label = self.plot.getPlotItem().titleLabel
        label.setText(f"<span style='{style}'>{escape(text)}</span>" if style else escape(text))
        return label.item.boundingRect().width()
