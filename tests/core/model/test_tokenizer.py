import pytest

from core.model.tokenizer import Utf8Assembler, WhisperTokenizer
from core.model.weights import find_tokenizer


@pytest.fixture(scope="module")
def tok():
    return WhisperTokenizer.from_file(find_tokenizer())


def test_special_tokens(tok):
    sp = tok.special
    assert (sp.eot, sp.sot, sp.no_timestamps) == (50257, 50258, 50363)
    assert (sp.transcribe, sp.translate) == (50359, 50358)
    assert tok.language_token("en") == 50259 and tok.language_token("zh") == 50260
    assert len(tok.languages) == 99
    assert tok.sot_sequence("zh", "transcribe") == [50258, 50260, 50359, 50363]
    assert tok.sot_sequence(None) == [50258]


def test_byte_level_decode_round_trip(tok):
    text = " And so my fellow Americans, 甚至出现交易"
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert b"".join(tok.token_bytes(i) for i in ids).decode() == text


def test_token_bytes_are_the_same_on_a_second_lookup(tok):
    ids = tok.encode(" Hello 世界") + [tok.special.eot, tok.special.timestamp_begin]
    first = [tok.token_bytes(i) for i in ids]
    assert [tok.token_bytes(i) for i in ids] == first
    assert first[-2:] == [b"", b""] and b"".join(first).decode() == " Hello 世界"


def test_streaming_never_shows_half_a_character(tok):
    ids = tok.encode("甚至出现交易几乎停滞的情况")
    pieces = [tok.token_bytes(i) for i in ids]
    assert any(len(p) < 3 for p in pieces), "expected a character split across tokens"
    asm = Utf8Assembler()
    shown = [asm.push(p) for p in pieces]
    asm.flush()
    assert all("\ufffd" not in s for s in shown)
    assert "".join(shown) == "甚至出现交易几乎停滞的情况" == asm.text


def test_assembler_split_bytes_by_hand():
    asm = Utf8Assembler()
    data = "滞".encode()
    assert asm.push(data[:1]) == "" and asm.push(data[1:2]) == "" and asm.push(data[2:]) == "滞"


def test_non_speech_tokens_exclude_words(tok):
    ns = set(tok.non_speech_tokens)
    assert tok.encode(" (")[0] in ns
    assert not ns & set(tok.encode(" hello world"))
