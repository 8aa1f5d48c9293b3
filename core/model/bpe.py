"""Byte-level BPE encoding (GPT-2's, as Whisper's tokenizer.json declares it) with the standard library only."""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte <-> printable-character map used by byte-level BPE."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_TO_UNICODE = bytes_to_unicode()
UNICODE_TO_BYTE = {c: b for b, c in BYTE_TO_UNICODE.items()}

# GPT-2's pre-tokenizer, 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+, in `re`'s
# terms. \s is Unicode's White_Space list (re's \s also takes U+001C-001F). A letter is a word character that is
# neither a digit nor "_"; a number is \d plus the No/Nl characters of the text at hand (re's \w counts them as
# word characters and has no class of its own for them), so the pattern is built per set of those.
_WS = "\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


@lru_cache(maxsize=64)
def _pattern(other_numbers: str) -> re.Pattern:
    extra = re.escape(other_numbers)
    letter = f"(?:(?![{extra}])[^\\W\\d_])" if extra else r"[^\W\d_]"
    number = f"[\\d{extra}]"
    other = f"(?:[^\\w{_WS}]|_)"
    return re.compile(f"'s|'t|'re|'ve|'m|'ll|'d| ?{letter}+| ?{number}+| ?{other}+|[{_WS}]+(?![^{_WS}])|[{_WS}]+")


def pre_tokenize(text: str) -> list[str]:
    numbers = "".join(sorted({c for c in text if not c.isdecimal() and unicodedata.category(c) in ("No", "Nl")}))
    return _pattern(numbers).findall(text)


_NEVER = 1 << 62   # the rank of a pair no merge makes


class BytePairEncoder:
    """Text -> token ids: added tokens split out first, the rest pre-tokenized, each piece merged by rank."""

    def __init__(self, vocab: dict[str, int], merges: list, added: dict[str, int]):
        self.vocab = vocab
        self.added = added
        self.ranks = {tuple(m.split(" ", 1) if isinstance(m, str) else m): i for i, m in enumerate(merges)}
        names = sorted(added, key=len, reverse=True)
        self._added_re = re.compile("|".join(map(re.escape, names))) if names else None
        self._memo: dict[str, list[int]] = {}

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        start = 0
        for m in self._added_re.finditer(text) if self._added_re else ():
            ids += self._encode_ordinary(text[start:m.start()])
            ids.append(self.added[m.group()])
            start = m.end()
        return ids + self._encode_ordinary(text[start:])

    def _encode_ordinary(self, text: str) -> list[int]:
        ids: list[int] = []
        for piece in pre_tokenize(text):
            got = self._memo.get(piece)
            if got is None:
                word = "".join(BYTE_TO_UNICODE[b] for b in piece.encode("utf-8"))
                got = self._memo[piece] = [self.vocab[p] for p in self._merge(word)]
            ids += got
        return ids

    def _merge(self, word: str) -> list[str]:
        parts = list(word)
        while len(parts) > 1:
            pairs = list(zip(parts, parts[1:]))
            best = min(pairs, key=lambda p: self.ranks.get(p, _NEVER))
            if best not in self.ranks:
                break
            first, second = best
            merged, i = [], 0
            while i < len(parts):
                if i < len(parts) - 1 and parts[i] == first and parts[i + 1] == second:
                    merged.append(first + second)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        return parts
