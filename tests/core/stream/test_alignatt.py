"""AlignAtt's commit rule on crafted attention (pure: no model): reading stops at the first token whose attention
lies within the margin of the audio's end, the word it stopped in waits, and so does a last word that no
next word has begun after before the stop."""
import numpy as np
import pytest

from core.decode.word_timing import Word
from core.stream.alignatt import AlignAtt, attended_frames, reading_stop
from core.stream.events import PassRecord
from core.stream.one_pass import PassResult

N_FRAMES = 220          # mel frames (10 ms): 110 encoder frames of audio
EOT = 50257


def attention_at(frames: list[int], heads: int = 8) -> np.ndarray:
    """[rows, heads, 1500]: each row's weight on a 9-frame block from its frame on (wider than the median
    filter, whose plateau then begins at the frame), a little on every other audio frame."""
    a = np.full((len(frames), heads, 1500), 1e-3, np.float32)
    for row, f in enumerate(frames):
        a[row, :, f:f + 9] = 1.0
    return (a / a.sum(-1, keepdims=True)).astype(np.float16)


def hypothesis(frames: list[int], eot_frame: int | None = None) -> PassResult:
    """" Hello world again" as tokens [" Hello"], [" wor", "ld"], [" again"], each token read at `frames`."""
    words = [Word(" Hello", 0.2, 0.5, 0.9, [1]), Word(" world", 0.5, 1.2, 0.9, [2, 3]),
             Word(" again", 1.2, 1.9, 0.9, [4])]
    sampled = [1, 2, 3, 4] + ([EOT] if eot_frame is not None else [])
    rows = frames + ([eot_frame] if eot_frame is not None else [])
    return PassResult(words, PassRecord(2.0, 1.0, 4, 1.0, 9), "en", False, [1, 2, 3, 4], sampled,
                      attention_at(rows), N_FRAMES)


def test_the_most_attended_frame_of_each_token_is_found():
    assert attended_frames(attention_at([20, 40, 60, 95]), N_FRAMES).tolist() == [20, 40, 60, 95]


@pytest.mark.parametrize("margin, stop", [(14, 4), (15, 3), (20, 3), (50, 2), (90, 0)])
def test_reading_stops_at_the_first_token_inside_the_margin(margin, stop):
    # 110 frames of audio: a token at frame 95 is 15 frames from the end, one at 60 is 50 from it.
    assert reading_stop(np.array([20, 40, 60, 95]), N_FRAMES, margin) == stop


def committed(rule: AlignAtt, result: PassResult) -> list[str]:
    return [w.word for w in rule.insert_pass(result)]


def test_the_word_before_a_word_begun_in_the_margin_waits_with_it():
    rule = AlignAtt(margin_frames=20)
    # " again" read at frame 95 (15 from the end): reading stops there. It begins a word, but at the audio's edge,
    # where " world" may still go on (" worldwide"): " world" waits with it; " Hello" is followed by " wor", read clear.
    assert committed(rule, hypothesis([20, 40, 60, 95])) == [" Hello"]
    assert [w.word for w in rule.tentative] == [" world", " again"]


def test_a_stop_inside_a_word_holds_that_word():
    # "ld" read at frame 60, 50 from the end, inside a margin of 55: " world" is cut and waits.
    # " Hello" is whole: the next word began (" wor") before the stop.
    rule = AlignAtt(margin_frames=55)
    assert committed(rule, hypothesis([20, 40, 60, 95])) == [" Hello"]
    assert [w.word for w in rule.tentative] == [" world", " again"]


def test_the_last_word_waits_when_only_eot_follows_it():
    # Every text token is clear of a 12-frame margin, EOT (9 from the end) is not: nothing began after " again",
    # which may go on.
    rule = AlignAtt(margin_frames=12)
    assert committed(rule, hypothesis([20, 40, 60, 95], eot_frame=101)) == [" Hello", " world"]
    assert [w.word for w in rule.tentative] == [" again"]


def test_eot_read_clear_of_the_margin_commits_the_last_word_too():
    # The decoder ended the text at frame 100 of 110, clear of a 5-frame margin: " again" is whole.
    rule = AlignAtt(margin_frames=5)
    assert committed(rule, hypothesis([20, 40, 60, 95], eot_frame=100)) == [" Hello", " world", " again"]
    assert rule.tentative == []


def test_nothing_is_committed_when_the_first_token_looks_into_the_margin():
    rule = AlignAtt(margin_frames=95)      # frame 20 is 90 from the end
    assert committed(rule, hypothesis([20, 40, 60, 95])) == []


def test_the_next_pass_commits_what_waited_once_the_audio_goes_on():
    rule = AlignAtt(margin_frames=20)
    committed(rule, hypothesis([20, 40, 60, 95]))
    # A longer buffer: the same words, then " there", read 20 frames before the end of 150: it stops there, and
    # " world" is committed, " again" now followed by the word begun in the margin.
    words = [Word(" Hello", 0.2, 0.5, 0.9, [1]), Word(" world", 0.5, 1.2, 0.9, [2, 3]),
             Word(" again", 1.2, 1.9, 0.9, [4]), Word(" there", 1.9, 2.6, 0.9, [5])]
    later = PassResult(words, PassRecord(3.0, 1.0, 5, 1.0, 10), "en", False, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5],
                       attention_at([20, 40, 60, 95, 130]), 300)
    assert committed(rule, later) == [" world"]
    assert [w.word for w in rule.tentative] == [" again", " there"]
