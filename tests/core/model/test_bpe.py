"""The standard-library tokenizer against Hugging Face `tokenizers` (a test dependency only) on the same tokenizer.json."""
import json
import random

import pytest
from tokenizers import Tokenizer

from core.model.bpe import pre_tokenize
from core.model.tokenizer import Utf8Assembler, WhisperTokenizer
from core.model.weights import find_tokenizer
from tests.conftest import AUDIO

PROMPTS = [
    "Hello world", " it's I'll we'D they've  ", "甚至出现交易几乎停滞的情况 and so my fellow Americans",
    "会议在 3 点开始, please bring the Q3 report (2024年第三季度)。", "Prompt: 你好, WhisperKV! 谢谢。",
    "x² ½ ① Ⅻ 〇三 12345 ٣٤", "snake_case__name", "a\x1cb \x1d\x85c\xa0d", "<|endoftext|>hi<|en|><|notimestamps|>",
    "नमस्ते दुनिया", "สวัสดีครับ", "😀👍🏽 ok", "  \n\n  x \t y\u3000z  ", "é e\u0301 Ünïcödé", "",
]


@pytest.fixture(scope="module")
def ours():
    return WhisperTokenizer.from_file(find_tokenizer())


@pytest.fixture(scope="module")
def theirs():
    return Tokenizer.from_file(str(find_tokenizer()))


def _texts() -> list[str]:
    refs = [clip["reference"] for clip in json.loads((AUDIO / "transcripts.json").read_text()).values()]
    return refs + [" " + r for r in refs] + PROMPTS


@pytest.mark.parametrize("text", _texts())
def test_encode_gives_tokenizers_ids(ours, theirs, text):
    assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids


def test_encode_matches_on_random_mixed_text(ours, theirs):
    rng = random.Random(42)
    alphabet = [chr(c) for c in [*range(32, 127), *range(0x4E00, 0x4E30), *range(0xA0, 0x180), 0xB2, 0xBD, 0x2460,
                                 0x2167, 0x3007, 0x1C, 0x85, 0x2028, 0x300, 0x94D, 0x1F600, 0x200B, 0x3000, 0x3002]]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids, repr(text)


def test_pre_tokenizer_splits_like_gpt2():
    assert pre_tokenize("I'll  go_2 x²!") == ["I", "'ll", " ", " go", "_", "2", " x", "²", "!"]


def test_encode_of_a_space_is_the_same(ours, theirs):
    assert ours.encode(" ") == theirs.encode(" ", add_special_tokens=False).ids == [220]


def test_non_speech_tokens_are_the_same(ours, theirs):
    class WithTokenizers(WhisperTokenizer):
        def encode(self, text):
            return theirs.encode(text, add_special_tokens=False).ids

    reference = WithTokenizers.from_file(find_tokenizer())
    assert ours.non_speech_tokens == reference.non_speech_tokens
    assert len(ours.non_speech_tokens) > 80


def test_decode_is_the_same(ours, theirs):
    for text in _texts():
        ids = theirs.encode(text, add_special_tokens=False).ids
        text_ids = [i for i in ids if i < ours.eot]
        assert ours.decode(ids) == theirs.decode(text_ids, skip_special_tokens=True)
        assert ours.decode(ids[:-1]) == theirs.decode(text_ids[:len(ids) - 1], skip_special_tokens=True)
    assert ours.token_label(ours.special.sot) == "<|startoftranscript|>"


def test_assembler_holds_a_character_split_across_tokens(ours):
    ids = ours.encode("停滞")
    pieces = [ours.token_bytes(i) for i in ids]
    assert any(p.decode("utf-8", errors="ignore") != p.decode("utf-8", errors="replace") for p in pieces), \
        "expected a token holding part of a character"
    asm = Utf8Assembler()
    shown = [asm.push(p) for p in pieces]
    assert asm.flush() == "" and "".join(shown) == "停滞" and all("\ufffd" not in s for s in shown)
