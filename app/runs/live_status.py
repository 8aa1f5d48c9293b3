"""A live stream as words for the people watching it: the committed text and its tentative tail, one status
line ("keeping up · 1.8 s behind the speaker"), and the stream's figures in plain words.

Qt-free: the Live tab and the presenter view both read one tally fed with the stream's events."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.stream.events import Committed, PassRecord, Skipped, Tentative

# The last passes a skip counts against: one skipped pass long ago does not make a stream "falling behind".
RECENT_PASSES = 3
ENDINGS = {"stopped": "stopped", "end of stream": "the audio ended", "error": "ended by an error"}


@dataclass
class LiveTally:
    committed: str = ""
    tentative: str = ""
    passes: list[PassRecord] = field(default_factory=list)
    lags_s: list[float] = field(default_factory=list)     # how far each commit trailed the end of its speech
    skips: int = 0
    passes_since_skip: int = RECENT_PASSES

    def add(self, events: list) -> None:
        for ev in events:
            if isinstance(ev, Committed):
                self.committed += ev.text if self.committed else ev.text.lstrip()
                self.lags_s.append(ev.lag_s)
            elif isinstance(ev, Tentative):
                self.tentative = ev.text if self.committed else ev.text.lstrip()
            elif isinstance(ev, Skipped):
                self.skips += 1
                self.passes_since_skip = 0
            elif isinstance(ev, PassRecord):
                self.passes.append(ev)
                self.passes_since_skip += 1

    def status(self, running: bool, end: str | None = None) -> str:
        """One line a customer reads: is it keeping up, and how far behind the speaker the text is."""
        if not running:
            how = ENDINGS.get(end or "", "ready")
            words = len(self.committed.split())
            return f"{how} · {words} word{'s' if words != 1 else ''}" if end else how
        if not self.passes:
            return "listening…"
        pace = "keeping up" if self.passes_since_skip >= RECENT_PASSES else "catching up: passes skipped to keep up"
        if not self.lags_s:
            return f"{pace} · nothing certain yet"
        return f"{pace} · {self.lags_s[-1]:.1f} s behind the speaker"

    def figures(self) -> str:
        """The stream so far in plain words, for the Live tab."""
        n = len(self.passes)
        parts = [f"{n} pass{'es' if n != 1 else ''} over the audio", f"{len(self.lags_s)} pieces of text confirmed"]
        if self.lags_s:
            lags = sorted(self.lags_s)
            parts.append(f"text appears {lags[len(lags) // 2]:.1f} s after the words are spoken (median)")
        audio_s = max((p.at_s for p in self.passes), default=0.0)
        if audio_s:
            compute_s = sum(p.encoder_ms + p.decode_ms for p in self.passes) / 1e3
            parts.append(f"the runner works {compute_s / audio_s:.2f} s per second of audio")
        parts.append(f"{self.skips} pass{'es' if self.skips != 1 else ''} skipped to keep up")
        return " · ".join(parts)
