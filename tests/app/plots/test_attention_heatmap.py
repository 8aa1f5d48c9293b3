"""The attention heatmap on synthetic runs (no model): a row per step placed at its window's offset, each
row scaled to its peak, growing as tokens stream in, a cursor at the peak, clicks that select a step."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from app.plots.attention_heatmap import BLOCK_ROWS, OFF_NOTE, AttentionHeatmap
from app.runs.session import Session
from core.decode.events import EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from tests.core.decode.crafted_attention import attention_at


def streaming_run(duration_s: float = 40.0):
    run = Session().new_run("clip.wav", DecodeOptions(attention=True), "local", {}, duration_s=duration_s)
    run.add(EncodedEvent(0, 10.0, "en"), 10.0)
    return run


def add_step(run, window: int, step: int, position: int, scale: float = 1.0, attention: bool = True):
    run.add(TokenEvent(window, step, 100 + step, " la", -0.2, 1e-5, [], 4 + step, 0, 20.0,
                       attention=attention_at(position, scale) if attention else None), 20.0 + step)


def test_rows_stream_in_placed_in_seconds(qtbot):
    heatmap = AttentionHeatmap()
    qtbot.addWidget(heatmap)
    run = streaming_run()
    heatmap.set_run(run)
    add_step(run, 0, 0, 100)
    add_step(run, 0, 1, 300, scale=0.3)        # a weak row is still drawn at full strength: scaled per row
    heatmap.refresh()
    rows = heatmap.window_rows(0)
    assert rows.shape == (2, 1500) and heatmap.blocks[0].item.image.shape == (2, 1500)
    assert rows[0].argmax() in range(98, 103) and rows[1].argmax() in range(298, 303)
    assert rows[0].max() == rows[1].max() == 255
    run.add(EncodedEvent(1, 10.0, "en", offset_s=30.0), 40.0)
    add_step(run, 1, 0, 250)                  # window 1 starts at 30 s: its row 2 looks at 35 s
    heatmap.refresh()
    assert heatmap.window_rows(1).shape == (1, 1500) and heatmap.window_rows(1)[0].argmax() in range(248, 253)
    placed = [b.item.mapRectToParent(b.item.boundingRect()) for b in heatmap.blocks]
    assert (placed[0].x(), placed[0].y(), placed[0].width(), placed[0].height()) == pytest.approx((0, 0, 30, 2))
    assert (placed[1].x(), placed[1].y(), placed[1].width(), placed[1].height()) == pytest.approx((30, 2, 30, 1))
    assert heatmap.focus == pytest.approx([2.0, 6.0, 35.0])


def test_cursor_follows_the_decode_until_a_step_is_selected(qtbot):
    heatmap = AttentionHeatmap()
    qtbot.addWidget(heatmap)
    run = streaming_run()
    heatmap.set_run(run)
    for step, position in enumerate((100, 200, 400)):
        add_step(run, 0, step, position)
        heatmap.refresh()
        assert heatmap.focus_line.value() == pytest.approx(position / 50) and heatmap.row_line.value() == step + 0.5
    heatmap.select_step(0)
    add_step(run, 0, 3, 600)
    heatmap.refresh()
    assert heatmap.focus_line.value() == pytest.approx(2.0) and heatmap.focus_line.isVisible()


def test_clicking_a_row_selects_its_step(qtbot):
    heatmap = AttentionHeatmap()
    qtbot.addWidget(heatmap)
    heatmap.resize(600, 400)
    heatmap.show()
    run = streaming_run(11.0)
    heatmap.set_run(run)
    heatmap.setXRange(0, 11, padding=0)
    for step in range(10):
        add_step(run, 0, step, 50 + 40 * step)
    heatmap.refresh()
    clicked = []
    heatmap.stepClicked.connect(clicked.append)
    scene = heatmap.plotItem.vb.mapViewToScene(QPointF(5.0, 6.5))
    QTest.mouseClick(heatmap.viewport(), Qt.MouseButton.LeftButton, pos=heatmap.mapFromScene(scene))
    assert clicked == [6]
    heatmap.scene().sigMouseMoved.emit(heatmap.plotItem.vb.mapViewToScene(QPointF(5.0, 3.5)))
    assert heatmap.toolTip().startswith("step 3: ' la'") and heatmap.toolTip().endswith("looks at 3.40 s")
    assert heatmap.focus_line.value() == pytest.approx((50 + 40 * 6) / 50) and heatmap.row_line.value() == 6.5


def test_a_run_without_attention_says_how_to_get_it(qtbot):
    heatmap = AttentionHeatmap()
    qtbot.addWidget(heatmap)
    run = streaming_run(5.0)
    heatmap.set_run(run)
    add_step(run, 0, 0, 100, attention=False)
    heatmap.refresh()
    assert heatmap.note.isVisible() and heatmap.note.toPlainText() == OFF_NOTE
    assert not heatmap.focus_line.isVisible() and not heatmap.window_rows(0).any()


def test_a_long_window_is_drawn_in_blocks_in_order(qtbot):
    heatmap = AttentionHeatmap()
    qtbot.addWidget(heatmap)
    run = streaming_run()
    heatmap.set_run(run)
    for step in range(BLOCK_ROWS + 5):
        add_step(run, 0, step, 20 + 10 * step)
    heatmap.refresh()
    assert [b.n for b in heatmap.blocks] == [BLOCK_ROWS, 5]
    assert list(heatmap.window_rows(0).argmax(axis=1)) == [20 + 10 * s - 2 for s in range(BLOCK_ROWS + 5)]  # peak: 5 wide
    second = heatmap.blocks[1].item.mapRectToParent(heatmap.blocks[1].item.boundingRect())
    assert (second.y(), second.height()) == pytest.approx((BLOCK_ROWS, 5))


def test_rows_are_scaled_to_their_peak_in_the_audio_not_the_sinks(qtbot):
    heatmap = AttentionHeatmap()
    qtbot.addWidget(heatmap)
    run = streaming_run(3.2)
    heatmap.set_run(run)
    sunk = attention_at(150).astype(np.float32) * 0.2
    sunk[:, 1499] += 0.8                       # the padding's last position takes most of the weight
    run.add(TokenEvent(0, 0, 100, "", -0.1, 0.9, [], 4, 0, 20.0, attention=sunk.astype(np.float16)), 20.0)
    heatmap.refresh()
    row = heatmap.window_rows(0)[0]
    assert row[148:153].max() == 255 and row[1499] == 255 and heatmap.focus == pytest.approx([3.0])
