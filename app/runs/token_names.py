"""Readable names for token ids: the transcript piece, or a marker for special tokens."""
from __future__ import annotations

import math
from functools import lru_cache

from core.decode.events import TokenEvent
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer

EOT_MARK = "⟨EOT⟩"


@lru_cache(maxsize=1)
def _tokenizer():
    try:
        return WhisperTokenizer.from_file(find_tokenizer())
    except Exception:  # names are a nicety here: ids still identify every token
        return None


def tokenizer():
    """The tokenizer (for word timings), or None when it cannot be found."""
    return _tokenizer()


def preload() -> None:
    """Read the tokenizer now (off the UI thread) so the first table paint does not wait for it."""
    _tokenizer()


def is_eot(token: int) -> bool:
    """Without a tokenizer no id is known to be EOT; a window's done event still says it ended at EOT."""
    tok = _tokenizer()
    return tok is not None and token == tok.special.eot


def name_of(token: int) -> str:
    """Text of one token id for the alternatives column; falls back to the id."""
    tok = _tokenizer()
    if tok is None:
        return f"#{token}"
    if token == tok.special.eot:
        return EOT_MARK
    label = tok.token_label(token)
    if "\ufffd" in label:  # part of a multi-byte character: its bytes say more than a replacement mark
        return "⟨" + tok.token_bytes(token).hex() + "⟩"
    return label


def event_label(ev: TokenEvent) -> str:
    if is_eot(ev.token):
        return EOT_MARK
    if ev.is_special:
        return name_of(ev.token)
    if ev.text:
        return ev.text
    return f"⟨{ev.text_bytes}⟩" if ev.text_bytes else name_of(ev.token)


def _partial(ev: TokenEvent) -> bool:
    """Bytes of a character that the next token completes: no text of its own yet."""
    return bool(ev.text_bytes) and not ev.text and not ev.is_special


def formed_text(events: list[TokenEvent], i: int) -> str:
    """The character(s) byte token `i` forms with its neighbours in the same window (the tokens before it
    that are bytes of the same character, and those after it up to the one that completes it); "" for a
    token that is not such a piece, or whose character never completes."""
    ev = events[i]
    if not _partial(ev):
        return ""
    start = i
    while start > 0 and _partial(events[start - 1]) and events[start - 1].window == ev.window:
        start -= 1
    data = b""
    for e in events[start:]:
        if e.window != ev.window or e.is_special:
            break
        data += bytes.fromhex(e.text_bytes or "")
        if e.text:
            break
    return data.decode("utf-8", errors="ignore")


def step_label(events: list[TokenEvent], i: int) -> str:
    """`event_label`, but a piece of a multi-byte character shows that character, then its own bytes."""
    formed = formed_text(events, i)
    return f"{formed} ⟨{events[i].text_bytes}⟩" if formed else event_label(events[i])


def hover_text(x: int, ev: TokenEvent) -> str:
    return f"step {x}: {event_label(ev)!r}  p={math.exp(ev.logprob):.2f}  p(EOT)={ev.eot_prob:.2g}"
