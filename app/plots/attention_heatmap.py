"""Live cross-attention heatmap: a row per decode step (top to bottom, as in the token table), audio time in
seconds across, x linked with the waveform and the mel. A row is the mean of the alignment heads scaled to
its own peak in the audio: a step's attention is one sharp peak, and a scale shared by all rows would hide most
of them (the attention sinks in the padding after the audio saturate).
The cursor marks where the current step (or the selected one) looks; a clicked word's span is shaded.
The rows are drawn as images of at most BLOCK_ROWS rows, each at its window's offset: a new token redraws
only the last block, however long the run."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

from app.plots.fitted_title import FittedTitle
from app.plots.step import CURSOR_PEN, X_STEP
from app.runs.record import RunRecord
from app.runs.token_names import hover_text
from app.runs.words import window_offset
from core.decode.attention_focus import POSITIONS_PER_S, audio_positions, step_rows

WINDOW_S = 30.0
BLOCK_ROWS = 32
COLORMAP = pg.ColorMap([0.0, 0.35, 1.0], [(255, 255, 255), (107, 174, 214), (8, 48, 107)])  # white: no weight
OFF_NOTE = "No attention in this run: tick Attention under Run to see where the decoder looks."


class RowBlock:
    """Up to BLOCK_ROWS consecutive rows of one window, drawn as one image."""

    def __init__(self, window: int, first_row: int, offset_s: float):
        self.window, self.first_row, self.offset_s = window, first_row, offset_s
        self.rows = np.zeros((BLOCK_ROWS, 1500), np.uint8)
        self.n = 0
        self.dirty = False
        self.item = pg.ImageItem(axisOrder="row-major")
        self.item.setColorMap(COLORMAP)

    def add(self, profile: np.ndarray | None) -> None:
        if profile is not None:
            self.rows[self.n, :len(profile)] = np.round(profile * 255).astype(np.uint8)
            self.dirty = True
        self.n += 1

    def draw(self) -> None:
        if self.dirty:
            self.dirty = False
            self.item.setImage(self.rows[:self.n], autoLevels=False, levels=(0, 255))
            self.item.setRect(self.offset_s, self.first_row, self.rows.shape[1] / POSITIONS_PER_S, self.n)


class AttentionHeatmap(pg.PlotWidget):
    stepClicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.title = FittedTitle(self)
        self.title.set("Cross-attention: where each step looks · mean of the alignment heads"
                       " · each row scaled to its peak")
        self.setLabel("bottom", "seconds of audio")
        self.setLabel("left", "decode step")
        self.setMouseEnabled(x=True, y=False)
        self.enableAutoRange(x=False, y=False)
        self.invertY(True)
        self.blocks: list[RowBlock] = []
        self.region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 193, 7, 60),
                                          pen=pg.mkPen("#ff8f00"))
        self.region.setVisible(False)
        self.addItem(self.region, ignoreBounds=True)
        self.focus_line = pg.InfiniteLine(angle=90, movable=False, pen=CURSOR_PEN)
        self.row_line = pg.InfiniteLine(angle=0, movable=False,
                                        pen=pg.mkPen("#d62728", width=1, style=pg.QtCore.Qt.PenStyle.DotLine))
        self.peak = pg.ScatterPlotItem(size=9, brush=pg.mkBrush("#d62728"), pen=pg.mkPen("w"))
        for item in (self.focus_line, self.row_line, self.peak):
            item.setVisible(False)
            self.addItem(item, ignoreBounds=True)
        self.note = pg.TextItem(OFF_NOTE, color="#666", anchor=(0, 0))
        self.note.setPos(0.5, 1)
        self.addItem(self.note, ignoreBounds=True)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.set_run(None)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if "title" in self.__dict__:      # the first resize comes from pyqtgraph's own constructor
            self.title.fit()

    # --- data ------------------------------------------------------------------------------

    def set_run(self, run: RunRecord | None) -> None:
        self.run = run
        self.selected: int | None = None
        self.focus: list[float] = []            # per row, where it looked (nan: no attention)
        self.has_attention = False
        for block in self.blocks:
            self.removeItem(block.item)
        self.blocks = []
        self._y_bucket = 0
        self.region.setVisible(False)
        if self.plotItem.vb.linkedView(0) is None:   # linked: the waveform's range is the heatmap's
            self.setXRange(0, WINDOW_S * max(1, math.ceil((run.duration_s if run else 0) / WINDOW_S)), padding=0)
        self._fit_y(0)
        self.refresh()

    def show_run(self, run: RunRecord | None) -> None:      # a run view (app/views/view_table.py)
        self.set_run(run)

    def refresh(self, run: RunRecord | None = None) -> None:
        """Add the rows the run gained since the last refresh, then redraw the blocks that changed."""
        rows = self.run.rows if self.run is not None else []
        added = rows[len(self.focus):]
        computed = {}
        for window in dict.fromkeys(r.event.window for r in added):
            looked = [r for r in added if r.event.window == window and r.event.attention is not None]
            if looked:
                n = audio_positions(self.run.duration_s, window_offset(self.run, window))
                profiles, positions = step_rows([r.event.attention for r in looked], n_positions=n)
                computed |= {r.x: (profiles[k], int(positions[k])) for k, r in enumerate(looked)}
        for row in added:
            self._add_row(row.x, row.event.window, computed.get(row.x))
        for block in self.blocks:
            block.draw()
        n = len(self.focus)
        self.note.setVisible(not self.has_attention and n > 0)
        if added:
            self._fit_y(n)
            self._show_cursor()

    def _add_row(self, x: int, window: int, looked: tuple[np.ndarray, int] | None) -> None:
        """Row `x` of `window`; `looked`: its profile and the position it looked at most (None: no attention)."""
        block = self.blocks[-1] if self.blocks else None
        if block is None or block.window != window or block.n == BLOCK_ROWS:
            block = RowBlock(window, x, window_offset(self.run, window))
            self.blocks.append(block)
            self.addItem(block.item)
            block.item.setZValue(-1)
        if looked is None:
            block.add(None)
            self.focus.append(math.nan)
            return
        block.add(looked[0])
        self.has_attention = True
        self.focus.append(block.offset_s + looked[1] / POSITIONS_PER_S)

    def window_rows(self, window: int) -> np.ndarray:
        """The rows drawn for `window`, uint8 [steps, 1500] (255: the step's peak)."""
        rows = [b.rows[:b.n] for b in self.blocks if b.window == window]
        return np.concatenate(rows) if rows else np.zeros((0, 1500), np.uint8)

    def _fit_y(self, n: int) -> None:
        """Double the step range as rows outgrow it: a range that moves redraws the axes, and a long run
        would otherwise move it every X_STEP rows."""
        bucket = X_STEP * 2 ** max(0, math.ceil(math.log2(max(n, 1) / X_STEP)))
        if bucket != self._y_bucket:
            self._y_bucket = bucket
            self.setYRange(0, bucket, padding=0)

    # --- cursor, span and clicks -----------------------------------------------------------

    def current_step(self) -> int | None:
        """The selected step, else the latest one (it follows the decode)."""
        if self.selected is not None and self.selected < len(self.focus):
            return self.selected
        return len(self.focus) - 1 if self.focus else None

    def focus_of(self, x: int) -> float | None:
        f = self.focus[x] if 0 <= x < len(self.focus) else math.nan
        return f if math.isfinite(f) else None

    def select_step(self, x: int) -> None:
        self.selected = x
        self._show_cursor()

    def _show_cursor(self) -> None:
        x = self.current_step()
        at = self.focus_of(x) if x is not None else None
        for item in (self.focus_line, self.row_line, self.peak):
            item.setVisible(at is not None)
        if at is None:
            return
        self.focus_line.setPos(at)
        self.row_line.setPos(x + 0.5)
        self.peak.setData([at], [x + 0.5])

    def show_span(self, start_s: float, end_s: float) -> None:
        self.region.setRegion((start_s, end_s))
        self.region.setVisible(True)

    def step_at(self, scene_pos) -> int | None:
        if not self.focus or not self.sceneBoundingRect().contains(scene_pos):
            return None
        y = self.plotItem.vb.mapSceneToView(scene_pos).y()
        return int(y) if 0 <= y < len(self.focus) else None

    def _on_mouse_moved(self, scene_pos) -> None:
        """The tooltip names the step under the mouse and where it looked."""
        x = self.step_at(scene_pos)
        if x is None:
            self.setToolTip("")
            return
        at = self.focus_of(x)
        self.setToolTip(hover_text(x, self.run.rows[x].event) + (f"  looks at {at:.2f} s" if at is not None else ""))

    def _on_mouse_clicked(self, event) -> None:
        x = self.step_at(event.scenePos())
        if x is not None:
            self.select_step(x)
            self.stepClicked.emit(x)
