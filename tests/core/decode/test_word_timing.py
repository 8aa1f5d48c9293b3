"""Word timings by whisper's DTW method, on synthetic attention and on a real decode of the JFK clip."""
import numpy as np
import pytest

from core.decode.decoding import decode_windows
from core.decode.events import DoneEvent, TokenEvent, event_from_dict, event_to_dict
from core.decode.options import DecodeOptions
from core.decode.subtitles import srt, vtt, word_cues
from core.decode.word_timing import dtw, median_filter, split_to_word_tokens, window_words, word_timings
from tests.conftest import AUDIO


def test_median_filter_reflects_like_torch():
    x = np.array([[1.0, 9.0, 2.0, 8.0, 3.0]])
    # reflect-padded by 1: [9,1,9,2,8,3,8] -> medians of 3
    assert median_filter(x, 3).tolist() == [[9.0, 2.0, 8.0, 3.0, 8.0]]


def test_dtw_follows_the_cheap_diagonal():
    cost = np.full((3, 6), 5.0)
    for i, cols in enumerate([(0, 1), (2, 3), (4, 5)]):
        cost[i, list(cols)] = 0.0
    text, time = dtw(cost)
    assert text[0] == 0 and time[0] == 0 and text[-1] == 2 and time[-1] == 5
    assert np.all(np.diff(text) >= 0) and np.all(np.diff(time) >= 0)
    assert [time[np.argmax(text == i)] for i in range(3)] == [0, 2, 4]


@pytest.fixture(scope="module")
def jfk(model):
    from core.model.audio import load_audio
    from core.model.mel import mel_windows

    audio = load_audio(AUDIO / "test_en.wav")
    n_frames = len(audio) // 160
    events = list(decode_windows(model.backend, model.tokenizer, mel_windows(audio),
                                 DecodeOptions(language="en", attention=True), n_frames=n_frames))
    return events, n_frames


def test_attention_rides_on_the_token_events_and_the_wire(jfk):
    events, _ = jfk
    toks = [e for e in events if isinstance(e, TokenEvent)]
    assert all(e.attention.shape == (8, 1500) and e.attention.dtype == np.float16 for e in toks)
    assert np.allclose(toks[3].attention.astype(np.float32).sum(-1), 1.0, atol=1e-2)
    back = event_from_dict(event_to_dict(toks[3]))
    assert np.array_equal(back.attention, toks[3].attention)


def test_jfk_words_cover_the_text_in_order_inside_the_audio(jfk, model):
    events, n_frames = jfk
    toks = [e for e in events if isinstance(e, TokenEvent)]
    done = next(e for e in events if isinstance(e, DoneEvent))
    words = window_words(toks, done, model.tokenizer, n_frames)
    assert "".join(w.word for w in words) == done.text
    duration = n_frames / 100
    for a, b in zip(words, words[1:]):
        assert a.end <= b.start + 1e-9
    assert all(0 <= w.start <= w.end <= duration for w in words)
    assert all(0 < w.probability <= 1 for w in words)
    by_word = {w.word.strip(" ,."): w for w in words}
    assert by_word["Americans"].end < duration / 2            # said in the first 2.2 s of 11
    assert by_word["country"].start > duration / 2
    assert words[-1].end > 0.8 * duration


def test_no_eot_row_and_no_text(model):
    tok = model.tokenizer
    tokens = tok.encode(" hello world")
    attn = np.zeros((len(tokens), 2, 1500), np.float32)
    for i in range(len(tokens)):
        attn[i, :, 100 + 200 * i] = 1.0
    words = word_timings(attn, tokens, [0.0] * len(tokens), tok, offset_s=30.0, n_frames=3000)
    assert [w.word for w in words] == [" hello", " world"]
    assert 30.0 <= words[0].start <= words[0].end <= words[1].start <= words[1].end <= 60.0
    assert word_timings(attn[:1], [tok.eot], [0.0], tok) == []


def test_split_by_characters_for_chinese(model):
    tok = model.tokenizer
    words, groups = split_to_word_tokens(tok, tok.encode("你好世界") + [tok.eot], "zh")
    assert "".join(words[:-1]) == "你好世界" and len(words) >= 3 and all(words[:-1])
    assert len(split_to_word_tokens(tok, tok.encode("你好世界") + [tok.eot], "en")[0]) == 2   # one word + EOT


def test_per_word_srt_and_vtt():
    cues = word_cues([{"word": " Hello", "start": 0.5, "end": 0.9}, {"word": " ", "start": 1, "end": 1},
                      {"word": " world.", "start": 1.0, "end": 1.62}])
    assert [c.text for c in cues] == ["Hello", "world."]
    assert srt(cues).startswith("1\n00:00:00,500 --> 00:00:00,900\nHello\n")
    assert "00:00:01.000 --> 00:00:01.620\nworld." in vtt(cues)
