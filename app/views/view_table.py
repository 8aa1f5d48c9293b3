"""The main window's views, one row each: what makes it, where it sits, and whether it follows a live run. The
window's layout, its `show_run`, the text views' sync and the live refresher's turns are generated from `VIEWS`;
the window's signal connections (the views' links to each other, a selected step, a clicked word, and the
controllers' and panels' requests to the window) from `links`, written as the window's attributes themselves.

A view of a run implements `RunView`: it reads a RunRecord (app/runs/record.py) and never talks to the link
(app/work/decode_worker.py turns runner events into Qt signals). A new view is its widget file and one row here
(docs/architecture.md, "How to add a view")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from PySide6.QtCore import QObject, SignalInstance
from PySide6.QtWidgets import QWidget

from app.plots.attention_heatmap import AttentionHeatmap
from app.plots.panel import PlotsPanel
from app.qa.tab import QaTab
from app.runs.record import RunRecord
from app.views.compare_panel import ComparePanel
from app.views.live_panel import LivePanel
from app.views.npu_profile_view import NpuProfileView
from app.views.quality_strip import QualityStrip
from app.views.segments import SegmentsView
from app.views.stop_banner import StopBanner
from app.views.token_table import TokenTable
from app.views.transcript import TranscriptView


class RunView(Protocol):
    def show_run(self, run: RunRecord | None) -> None:
        """The window shows `run` now (None: no run)."""

    def refresh(self, run: RunRecord) -> None:
        """The run on display gained events (or ended): show what is new. Cheap when nothing changed."""


@dataclass(frozen=True)
class ViewRow:
    name: str                         # the window's attribute
    make: Callable[..., QWidget]      # (window) -> the widget
    place: str                        # "banner" (beside the stop banner), "transcript", "pane" (under it),
                                      # "tab:<title>"
    live: str | None                  # its turn of the live refresher (views sharing a turn redraw together);
                                      # None: not a view of the run on display


# Taking turns keeps each event-loop pass to one turn's views (app/plots/live_refresh.py): the text views are
# cheap and share one; the heatmap, the table and each plot (PlotsPanel.turns) take one each.
VIEWS: list[ViewRow] = [
    ViewRow("banner", lambda window: StopBanner(), "banner", "text"),
    ViewRow("quality", lambda window: QualityStrip(), "banner", "text"),
    ViewRow("transcript", lambda window: TranscriptView(), "transcript", "text"),
    ViewRow("plots", lambda window: PlotsPanel(), "pane", "plots"),
    ViewRow("heatmap", lambda window: AttentionHeatmap(), "tab:Attention", "heatmap"),
    ViewRow("table", lambda window: TokenTable(), "tab:Tokens", "table"),
    ViewRow("segments", lambda window: SegmentsView(), "tab:Segments", "text"),
    ViewRow("compare", lambda window: ComparePanel(window.session), "tab:Compare runs", None),
    ViewRow("qa", lambda window: QaTab(), "tab:QA suite", None),
    ViewRow("live_panel", lambda window: LivePanel(), "tab:Live", None),
    ViewRow("npu_view", lambda window: NpuProfileView(), "tab:NPU profile", "text"),
]

def links(w) -> list[tuple[SignalInstance, Callable]]:
    """The window's signal connections, (signal, the slot it drives): the heatmap, the table and the plots follow
    each other's selected step; a clicked word or token selects its step everywhere; requests from the panels and
    the controllers' news reach the window; new audio opened shows no run (they stay in the picker).

    Each slot is a method of a GUI-thread QObject (link_views refuses anything else): a worker's signal then runs
    it on the GUI thread, where a lambda or a partial would run on the worker's."""
    return [
        (w.runs.updated, w._on_run_updated), (w.runs.ended, w._on_run_ended),
        (w.live_runs.updated, w._on_run_updated), (w.live_runs.ended, w._on_run_ended),
        (w.loader.loaded, w._on_clip), (w.loader.opened, w.run_picker.show_none),
        (w.board.connected, w._on_connected),
        (w.run_picker.picked, w.show_run),
        (w.controls.transcribeRequested, w.transcribe), (w.controls.stopRequested, w.stop),
        (w.qa.stopRequested, w.stop), (w.qa.openRunRequested, w.open_run), (w.runFinished, w.qa.run_finished),
        (w.live_panel.startRequested, w.start_live), (w.live_panel.exportRequested, w.exports.ask_live_export),
        (w.plots.stepSelected, w.table.select_step), (w.table.stepSelected, w.plots.select_step),
        (w.plots.stepSelected, w.heatmap.select_step), (w.table.stepSelected, w.heatmap.select_step),
        (w.heatmap.stepClicked, w.table.select_step), (w.heatmap.stepClicked, w.plots.select_step),
        (w.transcript.stepClicked, w.table.select_step), (w.transcript.stepClicked, w.plots.select_step),
        (w.transcript.stepClicked, w.heatmap.select_step),
        (w.span_player.spanShown, w.audio.view.show_span), (w.span_player.spanShown, w.heatmap.show_span),
    ]


def build_views(window) -> dict:
    """Makes every view as the window's attribute; returns lay_out's arguments: the banner row, the transcript,
    the panes and the tabs (app/views/window_layout.py)."""
    placed: dict = {"banner": [], "transcript": None, "pane": [], "tabs": {}}
    for row in VIEWS:
        widget = row.make(window)
        setattr(window, row.name, widget)
        if row.place.startswith("tab:"):
            placed["tabs"][row.place[4:]] = widget
        elif row.place == "transcript":
            placed["transcript"] = widget
        else:
            placed[row.place].append(widget)
    return {"banner": placed["banner"], "transcript": placed["transcript"], "panes": placed["pane"],
            "tabs": placed["tabs"]}


def run_views(window) -> list[RunView]:
    return [getattr(window, row.name) for row in VIEWS if row.live is not None]


def show_run(window, run: RunRecord | None) -> None:
    """Every view of a run shows `run` (the refresher's flush then brings each up to date)."""
    for view in run_views(window):
        view.show_run(run)


def live_turns(window) -> list[Callable[[], None]]:
    """The live refresher's turns, in the table's order: a turn redraws its views with the run on display."""
    turns: dict[str, list] = {}
    for row in VIEWS:
        if row.live is not None:
            turns.setdefault(row.live, []).append(getattr(window, row.name))
    out = []
    for views in turns.values():
        parts = getattr(views[0], "turns", None) if len(views) == 1 else None
        out += parts() if parts else [lambda views=views: _refresh(window, views)]
    return out


def _refresh(window, views: list) -> None:
    if window.run is not None:
        for view in views:
            view.refresh(window.run)


def link_views(window) -> None:
    for signal, slot in links(window):
        if not isinstance(getattr(slot, "__self__", None), QObject):
            raise TypeError(f"link {signal} -> {slot!r}: a link's slot must be a method of a GUI-thread QObject")
        signal.connect(slot)
