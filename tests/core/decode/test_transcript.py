"""Folding events into a Transcript: the no-speech rule decides the text, and a window without its done
event shows its tokens so far in live_text only."""
from __future__ import annotations

from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.transcript import Transcript


def token(window: int, step: int, text: str, special: bool = False) -> TokenEvent:
    return TokenEvent(window=window, step=step, token=100 + step, text=text, logprob=-0.1, eot_prob=1e-3,
                      top=[], cache_len=4 + step, cache_bytes=0, ms=10.0, is_special=special)


def fold(events) -> Transcript:
    t = Transcript()
    for ev in events:
        t.add(ev)
    return t


SPEECH = [EncodedEvent(0, 100.0, "en"), token(0, 0, " Hello"), token(0, 1, " world."),
          DoneEvent(0, "eot", [100, 101], " Hello world.", 200.0, "en", no_speech_prob=0.01, avg_logprob=-0.1)]
TAIL = [EncodedEvent(1, 90.0, "en", offset_s=30.0), token(1, 0, " you")]
SILENT_DONE = DoneEvent(1, "eot", [100], " you", 120.0, "en", no_speech_prob=0.65, avg_logprob=-2.7, offset_s=30.0)


def test_a_no_speech_window_is_decoded_but_not_shown():
    t = fold(SPEECH + TAIL + [SILENT_DONE])
    assert [w.silent for w in t.windows] == [False, True] and t.windows[1].text == " you"
    assert t.text == t.live_text == "Hello world."
    assert [w.window for w in t.shown_windows] == [0]


def test_live_text_shows_the_window_still_decoding():
    t = fold(SPEECH + TAIL + [token(1, 1, "", special=True)])
    assert t.stop_reason == "" and t.text == "Hello world."
    assert t.window_text(t.windows[1]) == " you" and t.live_text == "Hello world. you"


def test_done_finds_its_window_by_index():
    t = fold([DoneEvent(0, "cancelled", [], "", 5.0)])
    assert [(w.window, w.reason) for w in t.windows] == [(0, "cancelled")]
    t = fold(SPEECH + TAIL + [SILENT_DONE])
    assert t.windows[0].reason == "eot" and t.windows[0].text == " Hello world."


def test_each_window_names_the_encoder_window_it_was_encoded_in():
    t = Transcript()
    for ev in (EncodedEvent(window=0, ms=1.0, window_s=10), DoneEvent(0, "eot", [], "", 1.0, "en"),
               EncodedEvent(window=1, ms=1.0), DoneEvent(1, "eot", [], "", 1.0, "en")):
        t.add(ev)
    assert [w["window_s"] for w in t.summary()["windows"]] == [10, 30]      # an older runner's: 30
