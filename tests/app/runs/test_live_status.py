"""The words a live stream shows its audience: the status line and the figures, from stream events (no model)."""
from __future__ import annotations

from app.runs.live_status import LiveTally
from core.stream.events import Committed, PassRecord, Skipped, Tentative


def a_pass(at_s: float, ms: float = 400.0) -> PassRecord:
    return PassRecord(audio_s=at_s, encoder_ms=ms / 2, tokens=3, decode_ms=ms / 2, cache_len=9, at_s=at_s)


def test_keeping_up_and_how_far_behind_the_speaker():
    tally = LiveTally()
    assert tally.status(running=True) == "listening…"
    tally.add([a_pass(1.0), Tentative(" Hello", 0.2, 0.8, 1.2)])
    assert tally.status(running=True) == "keeping up · nothing certain yet" and tally.tentative == "Hello"
    tally.add([a_pass(2.0), Committed(" Hello", 0.2, 0.8, 2.6), Tentative(" world", 0.9, 1.4, 2.6)])
    assert tally.status(running=True) == "keeping up · 1.8 s behind the speaker"
    assert (tally.committed, tally.tentative) == ("Hello", " world")


def test_skipped_passes_are_called_what_they_are_and_age_out():
    tally = LiveTally()
    tally.add([a_pass(1.0), Skipped(3.0, 1.2, 2200.0), a_pass(3.0, ms=2200.0), Committed(" Hi", 0.1, 0.5, 3.0)])
    assert tally.status(running=True).startswith("catching up: passes skipped to keep up")
    assert "1 pass skipped to keep up" in tally.figures() and "skipped ahead" not in tally.figures()
    tally.add([a_pass(4.0), a_pass(5.0)])
    assert tally.status(running=True).startswith("keeping up")


def test_the_figures_and_the_ends_read_as_plain_words():
    tally = LiveTally()
    tally.add([a_pass(2.0, ms=1000.0), Committed(" Hello there", 0.1, 1.0, 2.5)])
    figures = tally.figures()
    assert "1 pass over the audio" in figures and "text appears 1.5 s after the words are spoken" in figures
    assert "the runner works 0.50 s per second of audio" in figures and "%" not in figures
    assert tally.status(running=False, end="stopped") == "stopped · 2 words"
    assert tally.status(running=False, end="end of stream") == "the audio ended · 2 words"
    assert tally.status(running=False) == "ready"
