"""The three live plots side by side, linked to each other and to the token table by step."""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QHBoxLayout, QWidget

from app.plots.cache import CachePlot
from app.plots.eot import EotPlot
from app.plots.latency import LatencyPlot
from app.runs.record import RunRecord


class PlotsPanel(QWidget):
    stepSelected = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.cache = CachePlot()
        self.latency = LatencyPlot()
        self.eot = EotPlot()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for plot in self.plots():
            layout.addWidget(plot)
            plot.stepClicked.connect(self.select_step)
            plot.stepClicked.connect(self.stepSelected)

    def plots(self):
        return (self.cache, self.latency, self.eot)

    def set_run(self, run: RunRecord | None) -> None:
        for plot in self.plots():
            plot.set_run(run)

    def show_run(self, run: RunRecord | None) -> None:      # a run view (app/views/view_table.py)
        self.set_run(run)

    def refresh(self, run: RunRecord | None = None) -> None:
        for plot in self.plots():
            plot.refresh()

    def turns(self) -> list:
        """While a run streams, each plot is redrawn in a turn of its own (app/plots/live_refresh.py)."""
        return [plot.refresh for plot in self.plots()]

    def select_step(self, x: int) -> None:
        for plot in self.plots():
            plot.select_step(x)

    def save_png(self, path: str, caption: str = "") -> bool:
        """All three graphs as one image, as they are on screen, under a line that names the run and its file
        (`caption`, the run picker's label), so the image says what it shows."""
        graphs = self.grab()
        if not caption:
            return graphs.save(path, "PNG")
        band = self.fontMetrics().lineSpacing() + 12
        image = QImage(graphs.width(), graphs.height() + band, QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setPen(QColor("#222"))
        painter.setFont(self.font())
        painter.drawText(QRect(8, 0, graphs.width() - 16, band), Qt.AlignmentFlag.AlignVCenter, caption)
        painter.drawPixmap(0, band, graphs)
        painter.end()
        return image.save(path, "PNG")
