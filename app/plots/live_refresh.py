"""Redraws the live views while tokens stream in, one view per timer tick.

Painting every view in one event-loop pass costs more than the 50 ms the UI may stall for (three
pyqtgraph plots, the table and the transcript); taking turns keeps each pass to one view while every
view still updates several times a second."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

TICK_MS = 20


class LiveRefresher(QObject):
    def __init__(self, updates: list[Callable[[], None]], parent=None):
        super().__init__(parent)
        self.updates = updates
        self.dirty = [False] * len(updates)
        self.next = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self._settled: list[Callable[[], None]] = []

    def poke(self) -> None:
        """New data arrived: every view is stale; they will catch up in turn."""
        self.dirty = [True] * len(self.updates)
        if not self.timer.isActive():
            self.timer.start()

    def settle(self, then: Callable[[], None]) -> None:
        """Bring every view up to date in turn, then call `then` (a run ended: no single long pass)."""
        self._settled.append(then)
        self.poke()

    def flush(self) -> None:
        """Bring every view up to date now (a run ended, or another run is shown)."""
        self.timer.stop()
        self.dirty = [False] * len(self.updates)
        for update in self.updates:
            update()
        waiting, self._settled = self._settled, []
        for then in waiting:
            then()

    def _tick(self) -> None:
        n = len(self.updates)
        for k in range(n):
            i = (self.next + k) % n
            if self.dirty[i]:
                self.dirty[i] = False
                self.updates[i]()
                self.next = i + 1
                break
        if any(self.dirty):
            self.timer.start()
            return
        waiting, self._settled = self._settled, []
        for then in waiting:
            then()
