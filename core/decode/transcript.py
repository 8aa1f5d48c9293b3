"""Folds a stream of decode events into one result: text, stop reason, per-step telemetry."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from core.decode.events import DoneEvent, EncodedEvent, Event, TokenEvent
from core.decode.quality import WindowQuality
from core.model.dims import FULL_WINDOW_S


@dataclass
class WindowResult:
    window: int
    language: str = ""
    encoder_ms: float = 0.0
    cache_hit: bool = False
    reason: str = ""
    text: str = ""
    tokens: list[int] = field(default_factory=list)
    ms_total: float = 0.0
    no_speech_prob: float = 0.0
    avg_logprob: float = 0.0
    silent: bool = False      # Whisper's no-speech rule: decoded, but its text is not shown
    offset_s: float = 0.0
    segments: list[dict] = field(default_factory=list)
    quality: WindowQuality | None = None
    words: list[dict] = field(default_factory=list)     # word_timestamps: [{word, start, end, probability}]
    window_s: int = FULL_WINDOW_S   # the encoder window it was encoded in (core/model/dims.py)


@dataclass
class Transcript:
    windows: list[WindowResult] = field(default_factory=list)
    steps: list[TokenEvent] = field(default_factory=list)
    language_probs: dict[str, float] = field(default_factory=dict)
    superseded: list[TokenEvent] = field(default_factory=list)   # steps of decodes a temperature fallback replaced

    def add(self, ev: Event) -> None:
        if isinstance(ev, EncodedEvent):
            self.windows.append(WindowResult(ev.window, ev.language, ev.ms, ev.cache_hit, offset_s=ev.offset_s,
                                             window_s=ev.window_s))
            if ev.language_probs:
                self.language_probs = ev.language_probs
        elif isinstance(ev, TokenEvent):
            if ev.step == 0 and self.steps and self.steps[-1].window == ev.window:
                # a temperature fallback re-decodes the window: its earlier attempt's steps step aside
                first = len(self.steps)
                while first and self.steps[first - 1].window == ev.window:
                    first -= 1
                self.superseded += self.steps[first:]
                del self.steps[first:]
            self.steps.append(ev)
        elif isinstance(ev, DoneEvent):
            w = self._window(ev.window)
            w.reason, w.text, w.tokens, w.ms_total = ev.reason, ev.text, ev.tokens, ev.ms_total
            w.no_speech_prob, w.avg_logprob, w.silent = ev.no_speech_prob, ev.avg_logprob, ev.is_silence
            w.segments, w.quality, w.words = ev.segments, ev.quality, ev.words

    def _window(self, index: int) -> WindowResult:
        for w in reversed(self.windows):
            if w.window == index:
                return w
        self.windows.append(WindowResult(index))  # a done without its encoded: keep the result anyway
        return self.windows[-1]

    @property
    def shown_windows(self) -> list[WindowResult]:
        """The windows whose text is shown: all but those under Whisper's no-speech rule."""
        return [w for w in self.windows if not w.silent]

    def window_text(self, w: WindowResult) -> str:
        """A finished window's text; before its done event (still decoding, or the link was lost), the
        text of its tokens so far."""
        if w.reason:
            return w.text
        return "".join(s.text for s in self.steps if s.window == w.window and not s.is_special)

    @property
    def text(self) -> str:
        """The transcript of the finished windows with speech."""
        return " ".join(t for w in self.shown_windows if (t := w.text.strip()))

    @property
    def live_text(self) -> str:
        """`text`, followed by the tokens so far of a window without its done event: what a live view shows,
        and what is left of a run that failed part-way."""
        return " ".join(t for w in self.shown_windows if (t := self.window_text(w).strip()))

    @property
    def segments(self) -> list[dict]:
        """Timed segments [{start, end, text}] of the windows with speech (timestamps mode only)."""
        return [g for w in self.shown_windows for g in w.segments]

    @property
    def words(self) -> list[dict]:
        """Timed words [{word, start, end, probability}] of the windows with speech (word_timestamps only)."""
        return [wd for w in self.shown_windows for wd in w.words]

    @property
    def language(self) -> str:
        return self.windows[0].language if self.windows else ""

    @property
    def stop_reason(self) -> str:
        """The last window's reason; "" while the decode is still running."""
        return self.windows[-1].reason if self.windows else ""

    @property
    def token_count(self) -> int:
        """Text tokens decoded: not EOT, not timestamps, not those of an attempt a fallback replaced. The one
        count the QA table and the studio's run picker show."""
        return sum(1 for s in self.steps if not s.is_special)

    @property
    def tokens(self) -> list[int]:
        return [t for w in self.windows for t in w.tokens]

    @property
    def encoder_ms(self) -> float:
        return sum(w.encoder_ms for w in self.windows)

    def per_token_ms(self) -> list[float]:
        """Runner ms of every step after each window's first (which also carries the SOT prefix)."""
        return [s.ms for s in self.steps if s.step > 0]

    def summary(self) -> dict:
        ms = self.per_token_ms()
        return {
            "text": self.text,
            "language": self.language,
            "stop_reason": self.stop_reason,
            "no_speech": bool(self.windows) and all(w.silent for w in self.windows),
            "encoder_ms": round(self.encoder_ms, 3),
            "tokens": self.tokens,
            "n_steps": len(self.steps),
            "decode_ms": round(sum(s.ms for s in self.steps), 3),
            "per_token_ms_median": round(float(np.median(ms)), 3) if ms else None,
            "per_token_ms_p95": round(float(np.percentile(ms, 95)), 3) if ms else None,
            "language_probs": self.language_probs,
            "segments": self.segments,
            "words": self.words,
            "windows": [{k: v for k, v in asdict(w).items() if k != "words"} for w in self.windows],
        }

    def steps_json(self) -> list[dict]:
        keys = ("window", "step", "token", "text", "logprob", "eot_prob", "top", "cache_len", "cache_bytes", "ms",
                "entropy", "temperature")
        return [{k: getattr(s, k) for k in keys} for s in self.steps]
