"""What the board pays during a run, beside the run in the status bar: the SoC and NPU the runner read on its
board, then its last `sample` (runner CPU time and memory, the board's available memory, the hottest thermal
zone), red while a zone is throttling or at HOT_C or more."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel

from core.qa.board_cost import HOT_C


class BoardCostLabel(QLabel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setStyleSheet("padding: 0 8px;")
        self.soc = ""
        self.show_soc(None)

    def show_soc(self, soc: dict | None) -> None:
        """From the runner's hello: the SoC and NPU (a runner that predates them reports neither)."""
        self.soc = f"SoC {soc['name']} ({soc['npu']})" if soc else "SoC —"
        self.setText(self.soc)
        self.setToolTip("")

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
