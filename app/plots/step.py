"""Shared behaviour of the live plots: x = decode step, hover names the step's token, click selects it."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Signal

from app.plots.fitted_title import FittedTitle
from app.runs.record import RunRecord
from app.runs.token_names import hover_text

SYMBOL_LIMIT = 120
X_STEP = 32
GRID = False  # grid lines are drawn by the axes and roughly double their paint time
CURSOR_PEN = pg.mkPen("#d62728", width=1, style=pg.QtCore.Qt.PenStyle.DashLine)


class StepPlot(pg.PlotWidget):
    stepHovered = Signal(int)
    stepClicked = Signal(int)

    def __init__(self, title: str, y_label: str, parent=None, **axis_items):
        super().__init__(parent, axisItems=axis_items or None)
        self.run: RunRecord | None = None
        self.title = FittedTitle(self)
        self.title.set(title)
        self.setLabel("bottom", "decode step")
        self.setLabel("left", y_label)
        self.showGrid(x=GRID, y=GRID, alpha=0.25)
        self.setMouseEnabled(x=True, y=False)
        self.enableAutoRange(x=False)
        self._x_bucket = 0
        self._fit_x(0)
        self.addLegend(offset=(-10, 10))
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=CURSOR_PEN)
        self.cursor.setVisible(False)
        self.addItem(self.cursor, ignoreBounds=True)
        self.hover_label = pg.TextItem("", anchor=(0, 1), color="#222", fill=pg.mkBrush(255, 255, 220, 230))
        self.hover_label.setVisible(False)
        self.hover_label.setZValue(10)
        self.addItem(self.hover_label, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if "title" in self.__dict__:      # the first resize comes from pyqtgraph's own constructor
            self.title.fit()

    # --- data ------------------------------------------------------------------------------

    def set_run(self, run: RunRecord | None) -> None:
        self.run = run
        self._x_bucket = 0
        self.cursor.setVisible(False)
        self.hover_label.setVisible(False)
        self.refresh()

    def refresh(self) -> None:
        """Redraw from the run's rows; subclasses draw their own curves in draw()."""
        self.draw(self.run)
        self._fit_x(len(self.run.rows) if self.run is not None else 0)
        # Markers help read a short run; on hundreds of points they only cost paint time.
        self.curve.setSymbol("o" if self.run is not None and len(self.run.rows) <= SYMBOL_LIMIT else None)

    def draw(self, run: RunRecord | None) -> None:
        raise NotImplementedError

    def _fit_x(self, n: int) -> None:
        """Grow the x range in steps of X_STEP: a range that moves every token forces every axis to be
        redrawn every frame, which is most of the paint time while decoding."""
        bucket = max(1, math.ceil(n / X_STEP))
        if bucket != self._x_bucket:
            self._x_bucket = bucket
            self.setXRange(0, bucket * X_STEP, padding=0.02)

    def point_count(self) -> int:
        """Points on the main curve (`self.curve`, set by each plot): one per decode step."""
        x, _ = self.curve.getData()
        return 0 if x is None else len(x)

    # --- linking ---------------------------------------------------------------------------

    def select_step(self, x: int) -> None:
        self.cursor.setPos(x)
        self.cursor.setVisible(True)

    def step_at(self, scene_pos) -> int | None:
        if self.run is None or not self.run.rows or not self.sceneBoundingRect().contains(scene_pos):
            return None
        x = round(self.plotItem.vb.mapSceneToView(scene_pos).x())
        return x if 0 <= x < len(self.run.rows) else None

    def _on_mouse_moved(self, scene_pos) -> None:
        x = self.step_at(scene_pos)
        if x is None:
            self.hover_label.setVisible(False)
            return
        text = hover_text(x, self.run.rows[x].event)
        view_pos = self.plotItem.vb.mapSceneToView(scene_pos)
        self.hover_label.setText(text)
        self.hover_label.setPos(view_pos)
        self.hover_label.setVisible(True)
        self.setToolTip(text)
        self.stepHovered.emit(x)

    def leaveEvent(self, event) -> None:
        """The mouse left the plot: its hover label goes with it (it stayed, naming a step no longer pointed at)."""
        self.hover_label.setVisible(False)
        self.setToolTip("")
        super().leaveEvent(event)

    def _on_mouse_clicked(self, event) -> None:
        x = self.step_at(event.scenePos())
        if x is not None:
            self.select_step(x)
            self.stepClicked.emit(x)
