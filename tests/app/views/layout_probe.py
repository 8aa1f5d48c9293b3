"""Run in a child process on a real X server (see test_window_fits.py): one studio, in four states (as it first
opens; after transcribing test_en.wav with attention; after a live stream; after a QA run), each tab of each state
visited, and as it opens each kind of device in the device panel; prints, as JSON, every fault
tests/app/views/layout_check.py finds and what of each plot lies outside its own widget."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QRectF, QSettings
from PySide6.QtWidgets import QApplication

from tests.app.views.layout_check import problems

QA_CLIPS = ("en_asterisk_hello-world.wav", "test_en.wav")   # a short suite: the table and status lines grow


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


def settle(run_events_for) -> None:
    """The window as the next frame shows it: 60 ms of events, then what they posted (a label whose text a
    late run update changed asks for its new height in a layout request that would otherwise wait for the next
    loop; a slow CI machine checked one such label between the two)."""
    run_events_for(60)
    QApplication.sendPostedEvents()
    QApplication.processEvents()


def visit_tabs(window) -> dict[str, list[str]]:
    """Every tab shown in turn: the window's faults, and its plots' clipped parts, with that tab in front."""
    from tests.app.conftest import run_events_for

    found = {}
    plots = [*window.plots.plots(), window.heatmap]
    tab_plots = {window.live_panel: [window.live_panel.plots.cache, window.live_panel.plots.latency,
                                     window.live_panel.plots.eot, window.live_panel.plots.lag],
                 window.compare: [window.compare.plot]}
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        settle(run_events_for)
        faults = problems(window)
        for plot in plots + tab_plots.get(window.tabs.widget(i), []):
            if plot.isVisible():
                faults += [f"{type(plot).__name__} {plot.getPlotItem().titleLabel.text!r}: {c}" for c in clipped(plot)]
        found[window.tabs.tabText(i)] = faults
    window.tabs.setCurrentIndex(0)
    return found


def device_kinds(window) -> dict[str, list[str]]:
    """The window's faults with each kind of device in the panel (each shows its own fields), then back to the first."""
    from tests.app.conftest import run_events_for

    combo, found = window.device.kind_combo, {}
    for i in range(combo.count()):
        combo.setCurrentIndex(i)
        settle(run_events_for)
        found[combo.itemText(i)] = problems(window)
    combo.setCurrentIndex(0)
    return found


def live_stream(window, clip: str) -> None:
    """A live stream of `clip`, fed as fast as the passes take it (the layout, not the pace, is under test)."""
    from app.work import live_worker
    from core.stream.feed import blocks_of
    from tests.app.conftest import open_and_wait, wait_for

    open_and_wait(window, clip)
    live_worker.realtime_blocks = lambda samples, *a, **kw: blocks_of(samples)
    ended, announced = [], []
    window.live_runs.ended.connect(ended.append)
    window.runFinished.connect(announced.append)     # the views settled: Compare offers the run
    window.tabs.setCurrentWidget(window.live_panel)
    window.start_live("file")
    wait_for(lambda: ended and announced, "the live stream to end")


def qa_run(window, folder: Path) -> None:
    from tests.app.conftest import wait_for
    from tests.conftest import AUDIO

    suite = folder / "suite.toml"
    suite.write_text(f'name = "layout"\nreferences = "{AUDIO / "transcripts.json"}"\n'
                     + "".join(f'[[clip]]\naudio = "{AUDIO / clip}"\nmax_wer = 0.5\n' for clip in QA_CLIPS))
    done = []
    window.qa.suiteFinished.connect(done.append)
    window.tabs.setCurrentWidget(window.qa)
    assert window.qa.start(str(suite))
    wait_for(lambda: done, "the QA suite to end")


def main() -> None:
    from app.main_window import MainWindow
    from tests.app.conftest import open_and_wait, transcribe_and_wait, wait_for

    app = QApplication.instance() or QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="layout-probe-"))
    store = QSettings(str(folder / "app.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store=store)
    window.show()
    wait_for(lambda: window.isVisible(), "the window to show")
    area = window.screen().availableGeometry()
    report = {"screen": [area.width(), area.height()], "states": {}}
    report["states"]["as it opens"] = visit_tabs(window)
    report["device kinds"] = device_kinds(window)
    open_and_wait(window, "test_en.wav")
    transcribe_and_wait(window, language="en", attention=True)
    app.processEvents()
    report["window"] = list(window.frameGeometry().getRect())
    report["status_bar_visible"] = area.contains(window.mapToGlobal(window.statusBar().geometry().bottomRight()))
    report["quality_strip"] = [window.quality.height(), window.quality.heightForWidth(window.quality.width())]
    report["states"]["after test_en.wav"] = visit_tabs(window)
    live_stream(window, "en_asterisk_hello-world.wav")
    report["states"]["after a live stream"] = visit_tabs(window)
    qa_run(window, folder)
    report["states"]["after a QA run"] = visit_tabs(window)
    window.tabs.enlarge.setChecked(True)
    report["states"]["after a QA run, the tabs enlarged"] = visit_tabs(window)
    window.tabs.enlarge.setChecked(False)
    report["window_after"] = list(window.frameGeometry().getRect())
    print(json.dumps(report))
    window.close()


if __name__ == "__main__":
    main()
