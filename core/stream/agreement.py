"""LocalAgreement-2 over timed words (whisper_streaming, arXiv 2307.14743): a word is committed once two
consecutive hypotheses of the growing buffer agree on it and on every word before it.

Each pass re-transcribes the whole buffer, so a hypothesis begins with words already committed; they are
recognised (by text, else by time plus an n-gram overlap, as whisper_streaming does) and only the rest
takes part in the agreement. Words compare by their normalised text: "world," and "World" agree."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.decode.word_timing import Word
from core.qa.scoring import normalize

MAX_NGRAM = 5           # whisper_streaming: committed words repeated at a hypothesis' start, up to 5
TIME_SLACK_S = 0.1      # a word starting this much before the last commit's end may still be new
# A word that starts before the last commit's end yet ends this much after it is new: Whisper skipped the committed
# words (a hypothesis of "He turned ..." for a buffer that still began with "ask what you can do for your country."),
# and word timing stretched the first word it wrote over the skipped audio (" He" from 7.34 s to 11.02 s).
SKIPPED_END_S = 0.5
ANCHOR_S = 1.0          # the committed text's last words, found again in a hypothesis, end this near where they did


def key(word: Word) -> str:
    return normalize(word.word)


def agreed_prefix(previous: list[Word], current: list[Word]) -> int:
    """How many leading words the two hypotheses share."""
    n = 0
    while n < min(len(previous), len(current)) and key(previous[n]) == key(current[n]):
        n += 1
    return n


@dataclass
class LocalAgreement:
    committed: list[Word] = field(default_factory=list)   # committed words whose audio is still in the buffer
    tentative: list[Word] = field(default_factory=list)   # the last hypothesis' words after the committed ones
    last_end: float = 0.0                                  # where the last committed word ends

    def unseen(self, words: list[Word]) -> list[Word]:
        """The words of a hypothesis of the whole buffer that follow what is already committed."""
        words = [w for w in words if key(w)]
        n = len(self.committed)
        if n and [key(w) for w in words[:n]] == [key(w) for w in self.committed]:
            return words[n:]
        anchored = self._after_committed_tail(words)
        if anchored is not None:
            return anchored
        new = [w for w in words if w.start > self.last_end - TIME_SLACK_S or w.end > self.last_end + SKIPPED_END_S]
        if new and self.committed and new[0].start - self.last_end < 1.0:
            for size in range(min(len(self.committed), len(new), MAX_NGRAM), 0, -1):
                if [key(w) for w in self.committed[-size:]] == [key(w) for w in new[:size]]:
                    return new[size:]
        return new

    def _after_committed_tail(self, words: list[Word]) -> list[Word] | None:
        """The words after the committed text's last words, found in the hypothesis where they were heard (within
        ANCHOR_S of the last commit's end): the hypothesis wrote its start another way, and the time filter alone
        would cut at word boundaries that move from pass to pass ("hours" ending at 39.64 s, then 39.54 s, and the
        " during" after it lost)."""
        keys = [key(w) for w in words]
        for size in range(min(len(self.committed), MAX_NGRAM), 0, -1):
            tail = [key(w) for w in self.committed[-size:]]
            for i in range(len(words) - size, -1, -1):
                if keys[i:i + size] == tail and abs(words[i + size - 1].end - self.last_end) < ANCHOR_S:
                    return words[i + size:]
        return None

    def insert(self, words: list[Word]) -> list[Word]:
        """Take a new hypothesis; return the words it commits (agreed with the previous one)."""
        new = self.unseen(words)
        n = agreed_prefix(self.tentative, new)
        return self._commit(new[:n], new[n:])

    def insert_pass(self, result) -> list[Word]:
        """Take a pass (core/stream/one_pass.py::PassResult); the policy calls every commit rule this way."""
        return self.insert(result.words)

    def flush(self, words: list[Word] | None = None) -> list[Word]:
        """Commit everything: the new hypothesis `words` (a final pass), or else the tentative words."""
        new = self.unseen(words) if words is not None else self.tentative
        return self._commit(new, [])

    def _commit(self, commit: list[Word], rest: list[Word]) -> list[Word]:
        self.committed += commit
        self.tentative = rest
        if commit:
            self.last_end = commit[-1].end
        return commit

    def forget_before(self, t: float) -> None:
        """The buffer now starts at `t`: committed words that ended by then can no longer be heard in it."""
        self.committed = [w for w in self.committed if w.end > t]

    def reset(self) -> None:
        """A new buffer after a pause: nothing of it is committed or tentative yet."""
        self.committed, self.tentative = [], []
