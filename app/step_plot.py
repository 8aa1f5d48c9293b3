"""Shared behaviour of the live plots: x = decode step, hover names the step's token, click selects it."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Signal

from app.run_record import RunRecord
from app.token_names import hover_text

CURSOR_PEN = pg.mkPen("#d62728", width=1, style=pg.QtCore.Qt.PenStyle.DashLine)


class StepPlot(pg.PlotWidget):
    stepHovered = Signal(int)
    stepClicked = Signal(int)

    def __init__(self, title: str, y_label: str, parent=None, **axis_items):
        super().__init__(parent, axisItems=axis_items or None)
        self.run: RunRecord | None = None
        self.setTitle(title)
        self.setLabel("bottom", "decode step")
        self.setLabel("left", y_label)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.setMouseEnabled(x=True, y=False)
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

    # --- data ------------------------------------------------------------------------------

    def set_run(self, run: RunRecord | None) -> None:
        self.run = run
        self.cursor.setVisible(False)
        self.hover_label.setVisible(False)
        self.refresh()

    def refresh(self) -> None:
        """Redraw from the run's rows; subclasses draw their own curves in draw()."""
        if self.run is None:
            self.draw(None)
            return
        self.draw(self.run)

    def draw(self, run: RunRecord | None) -> None:
        raise NotImplementedError

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

    def _on_mouse_clicked(self, event) -> None:
        x = self.step_at(event.scenePos())
        if x is not None:
            self.select_step(x)
            self.stepClicked.emit(x)
