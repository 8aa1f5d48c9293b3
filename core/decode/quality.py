"""How trustworthy a decoded window is, by openai-whisper's signals and thresholds (whisper/transcribe.py):
the compression ratio of its text (a repetition loop compresses well), the average logprob of its
tokens, the no-speech probability at the SOT position, and the mean entropy of the next-token
distribution. A window that fails the first two is re-decoded at a higher temperature when
DecodeOptions.temperature_fallback asks for it (core/decode/decoding.py).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

COMPRESSION_RATIO_THRESHOLD = 2.4
LOGPROB_THRESHOLD = -1.0
NO_SPEECH_THRESHOLD = 0.6
FALLBACK_TEMPERATURES = (0.2, 0.4, 0.6, 0.8, 1.0)    # after the greedy T=0, as whisper's default


def compression_ratio(text: str) -> float:
    """len(text) / len(zlib(text)) in UTF-8 bytes, as whisper's get_compression_ratio (0 for no text)."""
    raw = text.encode("utf-8")
    return len(raw) / len(zlib.compress(raw)) if raw else 0.0


@dataclass
class WindowQuality:
    compression_ratio: float = 0.0
    avg_logprob: float = 0.0
    no_speech_prob: float = 0.0
    mean_entropy: float = 0.0        # nats, over the sampled tokens (EOT's step included)
    temperature: float = 0.0         # of the decode these tokens came from: 0 is greedy
    fallbacks: list[str] = field(default_factory=list)   # one line per re-decode that fired, in order

    @property
    def silent(self) -> bool:
        """Whisper's no-speech rule (the window's text is not shown, and it is never re-decoded)."""
        return self.no_speech_prob > NO_SPEECH_THRESHOLD and self.avg_logprob < LOGPROB_THRESHOLD

    def failures(self) -> list[str]:
        """Each threshold this window fails, worded with its value: "compression ratio 3.10 > 2.4"."""
        out = []
        if self.compression_ratio > COMPRESSION_RATIO_THRESHOLD:
            out.append(f"compression ratio {self.compression_ratio:.2f} > {COMPRESSION_RATIO_THRESHOLD}")
        if self.avg_logprob < LOGPROB_THRESHOLD:
            out.append(f"avg logprob {self.avg_logprob:.2f} < {LOGPROB_THRESHOLD}")
        if self.silent:
            out.append(f"no-speech {self.no_speech_prob:.2f} > {NO_SPEECH_THRESHOLD}")
        return out

    def needs_fallback(self) -> bool:
        """Whisper's rule: a failed compression ratio or logprob, unless the window is silence."""
        return not self.silent and (self.compression_ratio > COMPRESSION_RATIO_THRESHOLD
                                    or self.avg_logprob < LOGPROB_THRESHOLD)

    def fallback_note(self) -> str:
        """The line recorded when this decode is thrown away for one at a higher temperature:
        "compression ratio 3.10 > 2.4 at T=0.0"."""
        reasons = [f for f in self.failures() if not f.startswith("no-speech")]
        return f"{' and '.join(reasons)} at T={self.temperature:.1f}"

    def fallback_verdict(self) -> str:
        """"re-decoded at T=0.4 after compression ratio 3.10 > 2.4 at T=0.0; …", or "" when none fired."""
        if not self.fallbacks:
            return ""
        still = [f for f in self.failures() if not f.startswith("no-speech")]
        return (f"re-decoded at T={self.temperature:.1f} after {'; '.join(self.fallbacks)}"
                + (f" (still {' and '.join(still)})" if still else ""))

    def label(self) -> str:
        """One line for the CLI's stop line and the studio's banner."""
        return (f"compression {self.compression_ratio:.2f} · logprob {self.avg_logprob:.2f} · "
                f"no-speech {self.no_speech_prob:.2f} · entropy {self.mean_entropy:.2f}"
                + (f" · T={self.temperature:.1f}" if self.temperature else ""))


def window_quality(text: str, avg_logprob: float, no_speech_prob: float, mean_entropy: float,
                   temperature: float = 0.0, fallbacks: list[str] | None = None) -> WindowQuality:
    return WindowQuality(round(compression_ratio(text), 4), avg_logprob, no_speech_prob, mean_entropy,
                         temperature, list(fallbacks or []))
