"""The prompt of each pass: the committed text that has already left the audio buffer (the decoder cannot
hear it any more), at most ~200 characters, as whisper_streaming does, within Whisper's token budget; and the
check that a pass copied its prompt instead of hearing its buffer."""
from __future__ import annotations

from core.decode.options import prompt_budget
from core.decode.word_timing import Word
from core.model.tokenizer import WhisperTokenizer
from core.qa.scoring import normalize

# Fewer words than this at a hypothesis' start match a prompt's end by chance ("the", "and the"); a whole prompt
# that short still counts.
COPIED_WORDS = 3


def prompt_text(committed: list[Word], buffer_start_s: float, max_chars: int = 200) -> str:
    """The last whole words committed before the buffer, no more than `max_chars` characters."""
    before = [w.word.strip() for w in committed if w.end <= buffer_start_s]
    picked: list[str] = []
    length = 0
    for word in reversed(before):
        if length + len(word) + 1 > max_chars:
            break
        picked.append(word)
        length += len(word) + 1
    return " ".join(reversed(picked))


def prompt_tokens(tokenizer: WhisperTokenizer, text: str, max_len: int = 448) -> list[int]:
    """Token ids of the prompt text (its last `prompt_budget` tokens); [] for no text."""
    if not text.strip():
        return []
    return tokenizer.encode(" " + text.strip())[-prompt_budget(max_len):]


def repeats_prompt(words: list[Word], text: str) -> bool:
    """Whether a pass's hypothesis begins with the prompt's last words (COPIED_WORDS at least, or the whole prompt):
    the decoder wrote again text that has left the buffer. Seen with a buffer cut after "She opened the window.":
    pass after pass wrote only that sentence and ended, while the buffer held 9 s of new speech."""
    prompt = [k for k in (normalize(w) for w in text.split()) if k]
    heard = [k for k in (normalize(w.word) for w in words) if k]
    shortest = min(COPIED_WORDS, len(prompt))
    return bool(prompt) and any(heard[:n] == prompt[-n:] for n in range(shortest, min(len(prompt), len(heard)) + 1))
