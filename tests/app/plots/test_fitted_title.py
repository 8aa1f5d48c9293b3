"""A plot's fitted title (offscreen): at any size it stays inside its plot, in width by wrapping its parts and in
height by leaving off the lines past a third of the plot (the last kept one ends in "…"); the tooltip keeps it all."""
from __future__ import annotations

from app.plots.latency import LatencyPlot

NOTE = "encoder 0.45 s · TTFT 0.56 s · 12 ms/token · 2 from the draft, not counted"


def test_a_short_plot_keeps_its_title_inside_and_the_whole_in_the_tooltip(qtbot):
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(286, 400)
    plot.show()
    plot.title.set("Per-token latency", NOTE)
    tall = plot.getPlotItem().titleLabel.text
    assert "12 ms/token" in tall and tall.count("<br>") >= 2
    plot.resize(286, 120)
    qtbot.waitUntil(lambda: plot.getPlotItem().titleLabel.text != tall)
    short = plot.getPlotItem().titleLabel.text
    assert short.count("<br>") < tall.count("<br>") and "…" in short
    assert plot.getPlotItem().titleLabel.item.boundingRect().height() <= 120 // 3
    assert plot.getPlotItem().titleLabel.toolTip() == f"Per-token latency\n{NOTE}"
    plot.resize(286, 400)
    qtbot.waitUntil(lambda: plot.getPlotItem().titleLabel.text == tall)
