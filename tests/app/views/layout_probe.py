"""Run in a child process on a real X server (see test_window_fits.py): open the studio, transcribe
test_en.wav with attention, then print, as JSON, what of each plot lies outside its own widget."""
from __future__ import annotations

import json
import sys
import tempfile

from PySide6.QtCore import QRectF, QSettings
from PySide6.QtWidgets import QApplication


def clipped(plot) -> list[str]:
    """The parts of a pyqtgraph plot (title, axes, legend) not wholly inside the widget that shows it."""
    item = plot.getPlotItem()
    view = QRectF(plot.rect())
    out = []
    axes = [name for name in ("left", "bottom", "right") if item.getAxis(name).isVisible()]
    parts = {"title": item.titleLabel.item} | {f"axis {name}": item.getAxis(name) for name in axes}
    if item.legend is not None and item.legend.isVisible():
        parts["legend"] = item.legend
    for name, part in parts.items():
        shown = part.mapRectToScene(part.boundingRect())
        if name == "title":       # the text itself, which LabelItem does not clip to its own box
            width = part.boundingRect().width()
            if width > item.titleLabel.geometry().width() + 1:
                room = item.titleLabel.geometry().width()
                out.append(f"title {part.toPlainText()!r} is {width:.0f} px in {room:.0f}")
                continue
        if not view.adjusted(-1, -1, 1, 1).contains(plot.mapFromScene(shown).boundingRect()):
            out.append(f"{name} {shown.getRect()} outside {view.getRect()}")
    return out


def main() -> None:
    from app.main_window import MainWindow
    from tests.app.conftest import open_and_wait, transcribe_and_wait, wait_for

    app = QApplication.instance() or QApplication(sys.argv[:1])
    store = QSettings(tempfile.mktemp(suffix=".ini"), QSettings.Format.IniFormat)
    window = MainWindow(store=store)
    window.show()
    wait_for(lambda: window.isVisible(), "the window to show")
    open_and_wait(window, "test_en.wav")
    transcribe_and_wait(window, language="en", attention=True)
    app.processEvents()
    area = window.screen().availableGeometry()
    plots = {p.__class__.__name__: p for p in (*window.plots.plots(), window.heatmap)}
    report = {
        "screen": [area.width(), area.height()],
        "window": list(window.frameGeometry().getRect()),
        "status_bar_visible": area.contains(window.mapToGlobal(window.statusBar().geometry().bottomRight())),
        "clipped": {name: clipped(p) for name, p in plots.items()},
        "quality_strip": [window.quality.height(), window.quality.heightForWidth(window.quality.width())],
    }
    print(json.dumps(report))
    window.close()




if __name__ == "__main__":
    main()
