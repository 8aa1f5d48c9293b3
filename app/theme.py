"""Look of the app: light plots (they are pasted into reports and READMEs) and a CJK-capable font.
No antialiasing: on a software rasteriser it multiplies the paint time of a curve of a few hundred points."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from app.fonts import cjk_family


def apply_theme(app: QApplication) -> None:
    pg.setConfigOptions(background="w", foreground="#222", antialias=False)
    font = app.font()
    cjk = cjk_family()
    if cjk:
        font.setFamilies([font.family(), cjk])
    app.setFont(font)
