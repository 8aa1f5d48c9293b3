"""What the board pays during a run, beside the run in the status bar: the SoC and NPU the runner read on its
board, then its last `sample` (runner CPU time and memory, the board's available memory, the hottest thermal
zone), red while a zone is throttling or at HOT_C or more.

A sample never widens the window: the label's least width is its SoC line's, not the whole reading's. With the
reading's, each extra digit (CPU 9.9 s, then 10.0 s) raised the window's least width; a window at that width (a
small screen) then grew by a few pixels mid-run and laid out and drew every view and plot again in one go, 40-70 ms
of UI-thread work during a live stream."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QLabel

from core.qa.board_cost import HOT_C


class BoardCostLabel(QLabel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setStyleSheet("padding: 0 8px;")
        self.soc = ""
        self.show_soc(None)

    def show_soc(self, soc: dict | None, words: str = "") -> None:
        """From the runner's hello: the SoC and NPU (a runner that predates them reports neither), or `words`, what
        the device is in the words every report uses (core/model/device_words.py: this PC, its CPU)."""
        self.soc = words or (f"SoC {soc['name']} ({soc['npu']})" if soc else "SoC —")
        self.setText(self.soc)
        self.setToolTip("")

    def minimumSizeHint(self) -> QSize:
        """The SoC line's room, whatever the sample shown: the whole reading is the size hint, shown in full
        wherever the window has room for it."""
        hint, metrics = super().minimumSizeHint(), self.fontMetrics()
        width = lambda text: metrics.boundingRect(QRect(), Qt.AlignmentFlag.AlignLeft, text).width()
        return QSize(min(hint.width(), hint.width() - width(self.text()) + width(self.soc)), hint.height())

    def show_sample(self, run_id: int, s: dict) -> None:
        zones = [z for z in s.get("zones") or [] if z.get("temp_c") is not None]
        hottest = max(zones, key=lambda z: z["temp_c"], default=None)
        hot = bool(s.get("throttling")) or (hottest is not None and hottest["temp_c"] >= HOT_C)
        num = lambda v, spec: "?" if v is None else format(v, spec)
        temp = f"{hottest['temp_c']:.1f} °C" if hottest else "no thermal zone"
        self.setText(f"{self.soc} · CPU {num(s.get('cpu_s'), '.1f')} s · RSS {num(s.get('rss_mb'), '.0f')} MB · "
                     f"free {num(s.get('mem_available_mb'), '.0f')} MB · {temp}"
                     + (" · THROTTLING" if s.get("throttling") else ""))
        self.setStyleSheet("padding: 0 8px;" + (" color: #b71c1c; font-weight: bold;" if hot else ""))
        self.setToolTip("\n".join(f"{z['zone']} ({z['type']}): {z['temp_c']:.1f} °C"
                                  + (f", passive trip {z['passive_c']:.0f} °C" if z.get("passive_c") else "")
                                  for z in zones))
