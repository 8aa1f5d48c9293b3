"""Click-to-play on synthetic runs (no model, no sound card): the sink gets exactly the span's samples,
and a step without a span or a run without audio says why instead of playing."""
from __future__ import annotations

import numpy as np
import pytest

from app.audio.span_player import SpanPlayer
from app.runs.clip import AudioClip
from app.runs.session import Session
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from core.errors import WhisperKVError
from tests.core.decode.crafted_attention import attention_at


def run_of(clip, attention: bool = True, offset_s: float = 0.0):
    """One still-decoding window (no words yet): a token looking at 2.0 s of its window."""
    run = Session().new_run("clip.wav", DecodeOptions(attention=attention), "local", {}, duration_s=4.0)
    run.clip = clip
    run.add(EncodedEvent(0, 10.0, "en", offset_s=offset_s), 10.0)
    run.add(TokenEvent(0, 0, 100, " la", -0.2, 1e-5, [], 4, 0, 20.0,
                       attention=attention_at(100) if attention else None), 20.0)
    return run


def clip_of(seconds: float = 4.0) -> AudioClip:
    samples = np.arange(int(seconds * 16000), dtype=np.float32) / 1e6   # each sample names its index
    return AudioClip("clip.wav", samples, np.zeros((1, 80, 3000), np.float32))


def test_a_step_without_a_word_plays_around_where_it_looked(qtbot):
    played, shown = [], []
    player = SpanPlayer(sink=played.append)
    player.spanShown.connect(lambda a, b: shown.append((a, b)))
    clip = clip_of()
    assert player.play_step(run_of(clip), 0) == pytest.approx((1.75, 2.25))
    assert shown == [pytest.approx((1.75, 2.25))]
    assert np.array_equal(played[0], clip.samples[28000:36000])


def test_no_attention_no_span_and_a_note(qtbot):
    played, notes = [], []
    player = SpanPlayer(sink=played.append)
    player.note.connect(notes.append)
    assert player.play_step(run_of(clip_of(), attention=False), 0) is None
    assert not played and "tick Attention" in notes[0]
    assert player.play_step(run_of(clip_of()), 5) is None      # no such step


def test_a_run_without_its_audio_shades_but_cannot_play(qtbot):
    played, notes, shown = [], [], []
    player = SpanPlayer(sink=played.append)
    player.note.connect(notes.append)
    player.spanShown.connect(lambda a, b: shown.append((a, b)))
    assert player.play_step(run_of(None), 0) is not None
    assert shown and not played and "not loaded" in notes[0]


def test_a_failing_output_is_a_failure_not_a_traceback(qtbot):
    failures = []

    def no_device(samples):
        raise WhisperKVError("playback failed: no usable audio output device", "connect speakers")

    player = SpanPlayer(sink=no_device)
    player.failed.connect(failures.append)
    notes = []
    player.note.connect(notes.append)
    player.play_step(run_of(clip_of()), 0)
    assert len(failures) == 1 and "no usable audio output" in failures[0].problem
    for _ in range(3):                                   # each click on a word used to pop the same dialog
        player.play_step(run_of(clip_of()), 0)
    assert len(failures) == 1 and len(notes) == 3 and "reported once" in notes[0]


def test_a_finished_window_plays_its_word(qtbot):
    """Once the window is done, the step's span is its word's, by DTW over the attention."""
    from app.runs.words import word_of_step

    played = []
    player = SpanPlayer(sink=played.append)
    clip = clip_of()
    run = run_of(clip)
    run.add(DoneEvent(0, "max_tokens", [100], " la", 100.0, "en", seek_frames=400), 30.0)
    word = word_of_step(run, 0)
    assert word is not None and 0.0 <= word.start <= word.end <= 4.0
    span = player.play_step(run, 0)
    assert span == (word.start, max(word.end, word.start + 0.02)) and len(played) == 1
