"""The window-quality signals beside the stop banner. The runner's WindowQuality (DoneEvent.quality) is not
on this branch yet: a stand-in with the same attributes rides on the done event, as the real one will."""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtWidgets import QHBoxLayout, QTextEdit, QVBoxLayout, QWidget

from app.runs.session import Session
from app.views.quality_strip import QualityStrip, window_quality
from app.views.stop_banner import StopBanner
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from tests.app.conftest import run_events_for


@dataclass
class StandInQuality:
    """Stand-in for core.decode.quality.WindowQuality (the other half of issue 13)."""

    compression_ratio: float = 1.3
    avg_logprob: float = -0.25
    no_speech_prob: float = 0.01
    mean_entropy: float = 0.42
    temperature: float = 0.0
    fallbacks: list[str] = field(default_factory=list)

    def failures(self) -> list[str]:
        out = []
        if self.compression_ratio > 2.4:
            out.append(f"compression ratio {self.compression_ratio:.2f} > 2.4")
        if self.avg_logprob < -1.0:
            out.append(f"avg logprob {self.avg_logprob:.2f} < -1.0")
        return out


def run_with(*qualities):
    run = Session().new_run("clip.wav", DecodeOptions(), "local", {})
    for w, q in enumerate(qualities):
        run.add(EncodedEvent(w, 10.0, "en", offset_s=30.0 * w), 10.0)
        run.add(TokenEvent(w, 0, 100, " la", -0.2, 1e-5, [], 4, 4 * 24576, 20.0), 20.0)
        done = DoneEvent(w, "eot", [100], " la", 100.0, "en", offset_s=30.0 * w)
        if q is not None:
            done.quality = q
        run.add(done, 30.0)
    return run


def test_signals_pass_and_fail_against_the_thresholds(qtbot):
    strip = QualityStrip()
    qtbot.addWidget(strip)
    strip.show_run(run_with(StandInQuality()))
    assert not strip.isHidden()
    text = strip.text()
    assert "compression 1.30 (≤ 2.4) ✓" in text and "avg logprob -0.25 (≥ -1.0) ✓" in text
    assert "no\u2011speech 0.01 (≤ 0.6) ✓" in text and "entropy 0.42" in text and "✗" not in text

    looping = StandInQuality(compression_ratio=3.1, avg_logprob=-1.4, temperature=0.2, fallbacks=["compression ratio"])
    strip.show_run(run_with(looping))
    text = strip.text()
    assert "compression 3.10 (≤ 2.4) ✗" in text and "avg logprob -1.40 (≥ -1.0) ✗" in text
    assert "T 0.2" in text and "fallback: compression ratio" in text
    assert "compression ratio 3.10 > 2.4" in strip.toolTip()


def test_the_failing_window_is_shown_not_the_last(qtbot):
    bad, good = StandInQuality(compression_ratio=2.9), StandInQuality()
    assert window_quality(run_with(good, bad, good)) is bad
    assert window_quality(run_with(good, StandInQuality(avg_logprob=-0.5))).avg_logprob == -0.5


def test_nothing_shown_without_quality(qtbot):
    strip = QualityStrip()
    qtbot.addWidget(strip)
    strip.show_run(run_with(None))
    assert strip.isHidden() and window_quality(run_with(None)) is None
    strip.show_run(run_with(StandInQuality()))
    strip.show_run(None)
    assert strip.isHidden()


def test_a_run_without_quality_keeps_the_room_so_nothing_below_moves(qtbot):
    """A live stream has no quality until its first pass: the strip goes blank in the room the last run's took,
    so the transcript and the panes under it are not laid out and drawn again as the stream starts and again at its
    first pass. With no run shown, the room is given back."""
    top = QWidget()
    qtbot.addWidget(top)
    column = QVBoxLayout(top)
    row = QHBoxLayout()
    banner, strip, below = StopBanner(), QualityStrip(), QTextEdit()
    banner.show_reason("eot")
    row.addWidget(banner, 1)
    row.addWidget(strip)
    column.addLayout(row)
    column.addWidget(below, 1)
    top.resize(560, 400)
    top.show()
    strip.show_run(run_with(StandInQuality()))
    run_events_for(50)
    placed = below.geometry()
    strip.show_run(run_with(None))
    run_events_for(50)
    assert strip.isHidden() and below.geometry() == placed
    strip.show_run(run_with(StandInQuality(compression_ratio=1.5)))
    run_events_for(50)
    assert not strip.isHidden() and "compression 1.50" in strip.text() and below.geometry() == placed
    strip.show_run(None)
    run_events_for(50)
    assert strip.isHidden() and below.geometry().height() > placed.height()


def test_a_signal_never_wraps_mid_word(qtbot):
    """The strip is as wide as its widest signal at least, and wraps between signals only (it wrapped mid-word)."""
    from PySide6.QtGui import QTextDocument

    strip = QualityStrip()
    qtbot.addWidget(strip)
    strip.show_run(run_with(StandInQuality(compression_ratio=3.1, avg_logprob=-1.4, fallbacks=["compression ratio"])))
    metrics = strip.fontMetrics()
    assert strip.minimumWidth() >= metrics.horizontalAdvance("avg logprob -1.40 (≥ -1.0) ✗")
    doc = QTextDocument()
    doc.setDefaultFont(strip.font())
    doc.setHtml(strip.text())
    doc.setTextWidth(strip.minimumWidth() - 12)      # the style sheet's padding, 6 px a side
    doc.size()
    block = doc.firstBlock()
    lines = [block.text()[line.textStart():line.textStart() + line.textLength()]
             for line in (block.layout().lineAt(i) for i in range(block.layout().lineCount()))]
    signal_lines = lines[:next(i for i, line in enumerate(lines) if line.endswith("\u2028"))]    # before the <br>
    assert signal_lines and all(line.rstrip().endswith("·") for line in signal_lines), lines
