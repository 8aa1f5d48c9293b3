"""SRT and WebVTT from a Transcript: core's timed segments, else one cue per window clamped to the audio;
windows under the no-speech rule get no cue."""
from __future__ import annotations

from core.decode import subtitles
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.transcript import Transcript


def fold(events) -> Transcript:
    t = Transcript()
    for ev in events:
        t.add(ev)
    return t


def window(i: int, text: str, silent: bool = False, segments=None) -> list:
    return [EncodedEvent(i, 10.0, "en", offset_s=30.0 * i),
            DoneEvent(i, "eot", [1], text, 20.0, "en", no_speech_prob=0.9 if silent else 0.0,
                      avg_logprob=-2.0 if silent else -0.1, offset_s=30.0 * i, segments=segments or [])]


def test_clock_formats():
    assert subtitles.clock(3725.5) == "01:02:05,500" and subtitles.clock(0.0004, ".") == "00:00:00.000"


def test_window_cues_are_clamped_to_the_audio_and_skip_no_speech():
    t = fold(window(0, " First part.") + window(1, " Second part.") + window(2, " you", silent=True))
    cues = subtitles.cues(t, duration_s=61.0)
    assert [(c.start, c.end, c.text) for c in cues] == [(0.0, 30.0, "First part."), (30.0, 60.0, "Second part.")]
    assert subtitles.srt(cues) == ("1\n00:00:00,000 --> 00:00:30,000\nFirst part.\n\n"
                                   "2\n00:00:30,000 --> 00:01:00,000\nSecond part.\n")
    assert subtitles.cues(fold(window(0, " Short.")), duration_s=2.5)[0].end == 2.5


def test_segments_are_the_cues_when_there_are_any():
    segments = [{"start": 0.4, "end": 1.1, "text": " Hi"}, {"start": 1.1, "end": 1.1, "text": " "},
                {"start": 1.1, "end": 2.6, "text": " there"}]
    cues = subtitles.cues(fold(window(0, " Hi there", segments=segments)), duration_s=3.0)
    assert subtitles.vtt(cues) == "WEBVTT\n\n00:00:00.400 --> 00:00:01.100\nHi\n\n00:00:01.100 --> 00:00:02.600\nthere\n"


def test_a_window_cut_off_part_way_is_one_cue_of_its_tokens_so_far():
    events = window(0, " Done.") + [EncodedEvent(1, 10.0, "en", offset_s=30.0)]
    events += [TokenEvent(1, 0, 5, " Half", -0.1, 0.0, [], 4, 0, 1.0), TokenEvent(1, 1, 6, " way", -0.1, 0.0, [], 5, 0, 1.0)]
    cues = subtitles.cues(fold(events), duration_s=45.0)
    assert [(c.start, c.end, c.text) for c in cues] == [(0.0, 30.0, "Done."), (30.0, 45.0, "Half way")]


def test_window_cues_of_long_audio_end_where_the_next_window_starts():
    """Long audio seeks by timestamp tokens even without timestamps shown: windows at 0, 25.92 and 48 s."""
    events = []
    for i, (offset, text) in enumerate([(0.0, " One."), (25.92, " Two."), (48.0, " Three.")]):
        events += [EncodedEvent(i, 10.0, "en", offset_s=offset),
                   DoneEvent(i, "eot", [1], text, 20.0, "en", no_speech_prob=0.0, avg_logprob=-0.1, offset_s=offset)]
    cues = subtitles.cues(fold(events), duration_s=66.4)
    assert [(c.start, c.end) for c in cues] == [(0.0, 25.92), (25.92, 48.0), (48.0, 66.4)]
