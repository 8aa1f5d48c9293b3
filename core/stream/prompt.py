"""The prompt of each pass: the committed text that has already left the audio buffer (the decoder cannot
hear it any more), at most ~200 characters, as whisper_streaming does, within Whisper's token budget."""
from __future__ import annotations

from core.decode.options import prompt_budget
from core.decode.word_timing import Word
from core.model.tokenizer import WhisperTokenizer


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
