"""The per-token latency plots mark the tokens a live pass took from its draft: their ms is near zero because
no graph call ran for them, and the plots say so rather than show it as a glitch."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.plots.latency import LatencyPlot
from app.plots.live_plots import LivePlots
from app.runs.session import Session
from core.decode.events import EncodedEvent
from core.stream.events import PassRecord
from tests.app.runs.test_exports import make_run, token


def legend_names(plot) -> list[str]:
    return [label.text for _, label in plot.getPlotItem().legend.items]


def test_the_run_plot_marks_drafted_tokens_and_names_them_only_when_there_are_some(qtbot):
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    session = Session()
    steps = [token(0, 0, 1, " a", ms=80.0), replace(token(0, 1, 2, " b", ms=0.02), drafted=True),
             replace(token(0, 2, 3, " c", ms=0.03), drafted=True), token(0, 3, 4, " d", ms=9.0)]
    plot.draw(make_run(session, [EncodedEvent(0, 600.0, "en"), *steps]))
    x, y = plot.drafted.getData()
    assert list(y) == [0.02, 0.03] and len(plot.curve.getData()[1]) == 4    # every token stays on the line
    assert "from the draft" in legend_names(plot)
    # the title's median leaves the drafted tokens out (they ran no graph call) and step 0 (the SOT prefix)
    assert "9 ms/token" in plot.getPlotItem().titleLabel.text
    assert "2 from the draft, not counted" in plot.title.note                # how many the median leaves out
    plot.draw(make_run(session, [EncodedEvent(0, 600.0, "en"), token(0, 0, 1, " a"), token(0, 1, 2, " b")]))
    assert plot.drafted.getData()[1] is None                                # no marks left over
    assert "from the draft" not in legend_names(plot)


def test_the_live_plot_draws_drafted_steps_apart(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    first = PassRecord(1.0, 500.0, 2, 30.0, 6, token_ms=[25.0, 9.0, 9.5], token_drafted=[False, False, False])
    second = PassRecord(2.0, 500.0, 3, 30.0, 7, token_ms=[40.0, 0.02, 0.03, 9.1],
                        token_drafted=[False, True, True, False])
    older = PassRecord(3.0, 500.0, 1, 9.0, 5, token_ms=[9.0])           # a record without the flags
    plots.add([first, second, older])
    plots.redraw()                        # hidden, it would draw when first shown
    sx, sy = plots.latency_curve.getData()
    dx, dy = plots.drafted_curve.getData()
    assert list(dx) == [4, 5] and list(dy) == [0.02, 0.03]
    assert list(sx) == [0, 1, 2, 3, 6, 7] and np.allclose(sy, [25.0, 9.0, 9.5, 40.0, 9.1, 9.0])
    assert "the last pass had already found" in plots.latency.toolTip()
