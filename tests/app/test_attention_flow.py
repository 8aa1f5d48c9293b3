"""The studio with attention, on a real decode of test_en.wav by the local runner: the heatmap, the EOT
banner, words tinted by probability, and click-to-play into an injected sink (no sound card here)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest

from app.runs.words import word_rows
from app.views.transcript import token_format
from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait, wait_for


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    """test_en.wav transcribed with the studio's default options (attention on)."""
    w = make_window(settings_file(tmp_path_factory.mktemp("settings") / "app.ini"))
    assert w.controls.attention.isChecked()
    open_and_wait(w, "test_en.wav")
    transcribe_and_wait(w, language="en")
    wait_for(lambda: 0 in w.transcript.tinted, "the words' timings")
    yield w
    w.close()


@pytest.fixture()
def played(window):
    """What the click-to-play sink was asked to play."""
    calls = []
    window.span_player.output.sink = calls.append
    yield calls


def shown(window):
    run = window.session.runs[0]
    window.show_run(run)
    return run


def test_every_step_has_a_heatmap_row_and_eot_looks_at_the_end(window):
    run = shown(window)
    assert run.stop_reason == "eot" and all(r.event.attention is not None for r in run.rows)
    heatmap = window.heatmap
    assert heatmap.window_rows(0).shape == (len(run.rows), 1500)
    assert all(block.item.image is not None for block in heatmap.blocks)
    assert not heatmap.note.isVisible()
    eot_at = heatmap.focus[-1]
    assert 0.8 * run.duration_s < eot_at < run.duration_s + 0.5
    assert heatmap.focus_line.value() == pytest.approx(eot_at)     # the cursor follows the last step
    assert f"EOT while attention was at {eot_at:.1f} s of {run.duration_s:.1f} s (the end of the speech)" \
        in window.banner.text()


def test_heatmap_shares_the_waveform_seconds(window):
    shown(window)
    window.audio.view.wave_plot.setXRange(2.0, 6.0, padding=0)
    assert window.heatmap.viewRange()[0] == pytest.approx([2.0, 6.0], abs=1e-6)
    window.audio.view.wave_plot.setXRange(0, 30, padding=0)


def test_selecting_a_token_moves_the_heatmap_cursor(window):
    run = shown(window)
    window.table.selectRow(4)
    assert window.heatmap.row_line.value() == 4.5
    assert window.heatmap.focus_line.value() == pytest.approx(window.heatmap.focus[4])
    assert window.heatmap.focus[4] < window.heatmap.focus[len(run.rows) - 2]   # attention moves forward


def test_words_are_tinted_by_their_probability(window):
    run = shown(window)
    words = word_rows(run)
    assert len(words) >= 20 and "".join(w.word for w, _ in words).strip().startswith("And so")
    doc = window.transcript.document()
    starts = dict(zip(window.transcript._steps, window.transcript._starts))
    for word, xs in words:
        cursor = QTextCursor(doc)
        cursor.setPosition(starts[xs[0]] + 1)
        assert cursor.charFormat().background() == token_format(word.probability).background(), word


def click_text(view, position: int) -> None:
    cursor = QTextCursor(view.document())
    cursor.setPosition(position)
    rect = view.cursorRect(cursor)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.x() + 3, rect.center().y()))


def test_clicking_a_word_plays_and_shades_its_span(window, played):
    run = shown(window)
    word, xs = next((w, xs) for w, xs in word_rows(run) if w.word.strip().startswith("Americans"))
    click_text(window.transcript, dict(zip(window.transcript._steps, window.transcript._starts))[xs[0]] + 2)
    a, b = round(word.start * 16000), round(word.end * 16000)
    assert len(played) == 1 and np.array_equal(played[0], window.clip.samples[a:b])
    assert window.audio.view.span() == pytest.approx((word.start, word.end))
    assert window.heatmap.region.isVisible() and window.heatmap.region.getRegion() == pytest.approx((word.start, word.end))
    assert window.table.currentIndex().row() == xs[0]


def test_clicking_a_token_row_plays_its_word(window, played):
    run = shown(window)
    word, xs = word_rows(run)[3]
    index = window.table.model().index(xs[-1], 2)
    QTest.mouseClick(window.table.viewport(), Qt.MouseButton.LeftButton, pos=window.table.visualRect(index).center())
    a, b = round(word.start * 16000), round(word.end * 16000)
    assert len(played) == 1 and np.array_equal(played[0], window.clip.samples[a:b])


def test_clicking_the_eot_marker_plays_where_eot_looked(window, played):
    run = shown(window)
    text = window.transcript.toPlainText()
    click_text(window.transcript, text.rindex("⟨EOT⟩") + 1)
    at = window.heatmap.focus[-1]
    assert window.audio.view.span() == pytest.approx((at - 0.25, at + 0.25))
    expected = window.clip.samples[round((at - 0.25) * 16000):round((at + 0.25) * 16000)]
    assert len(played) == 1 and np.array_equal(played[0], expected) and len(expected) > 0
    assert window.table.currentIndex().row() == len(run.rows) - 1
