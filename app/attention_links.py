"""How the attention views follow each other: the heatmap follows the selected step and shares the waveform's
seconds; a clicked word or token plays its span and shades it on the waveform and the heatmap."""
from __future__ import annotations


def link_attention(window) -> None:
    heatmap, table, plots, transcript, player = (window.heatmap, window.table, window.plots, window.transcript,
                                                 window.span_player)
    heatmap.setXLink(window.audio.view.wave_plot)   # seconds, aligned with the waveform and the mel
    for source in (plots, table):
        source.stepSelected.connect(heatmap.select_step)
    heatmap.stepClicked.connect(table.select_step)
    heatmap.stepClicked.connect(plots.select_step)
    for source in (transcript, table):
        source.stepClicked.connect(lambda x: player.play_step(window.run, x))
    for target in (table, plots, heatmap):
        transcript.stepClicked.connect(target.select_step)
    player.spanShown.connect(window.audio.view.show_span)
    player.spanShown.connect(heatmap.show_span)
    player.note.connect(lambda text: window.status.showMessage(text, 8000))
    player.failed.connect(window.show_failure)
