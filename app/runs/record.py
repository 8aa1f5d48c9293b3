"""One transcription run of the session: every event as it arrived, plus the series the views plot.

Qt-free so that exports, compare and tests can use it without a window.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from app.runs.options import RunOptions
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent

EOT_TOKEN = 50257


@dataclass
class TokenRow:
    """One decode step as the table and the plots show it."""

    x: int            # run-wide step index (windows follow each other), the plots' x axis
    event: TokenEvent
    host_ms: float    # host-observed time since the previous event of the run arrived
    arrival_ms: float  # since the request was sent


@dataclass
class RunRecord:
    id: int
    audio_name: str
    options: RunOptions
    device: str = "local"
    device_info: dict = field(default_factory=dict)
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))
    duration_s: float = 0.0
    events: list = field(default_factory=list)       # EncodedEvent | TokenEvent | DoneEvent
    arrivals_ms: list = field(default_factory=list)  # one per event, since the request was sent
    rows: list = field(default_factory=list)         # TokenRow per TokenEvent
    encoded: list = field(default_factory=list)      # EncodedEvent per window
    done: list = field(default_factory=list)         # DoneEvent per window
    error: dict | None = None                        # {"problem", "fix", "code"} when the run failed

    def add(self, event, arrival_ms: float) -> TokenRow | None:
        previous = self.arrivals_ms[-1] if self.arrivals_ms else 0.0
        self.events.append(event)
        self.arrivals_ms.append(arrival_ms)
        if isinstance(event, EncodedEvent):
            self.encoded.append(event)
        elif isinstance(event, DoneEvent):
            self.done.append(event)
        elif isinstance(event, TokenEvent):
            row = TokenRow(len(self.rows), event, arrival_ms - previous, arrival_ms)
            self.rows.append(row)
            return row
        return None

    # --- what the views and exports read -------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.error is not None or self.stop_reason in ("cancelled", "error") or bool(self.done)

    @property
    def stop_reason(self) -> str | None:
        if self.error is not None:
            return "error"
        if self.done:
            # Over several windows the last one decides; an earlier cache_full is still worth seeing.
            return self.done[-1].reason
        return None

    @property
    def encoder_ms(self) -> float | None:
        return self.encoded[0].ms if self.encoded else None

    @property
    def ttft_ms(self) -> float | None:
        return self.rows[0].arrival_ms if self.rows else None

    @property
    def language(self) -> str:
        for ev in self.done + self.encoded:
            if ev.language:
                return ev.language
        return self.options.language

    def text(self) -> str:
        """The transcript: finished windows' text, then the live tokens of the window still decoding."""
        return "".join(t for _, t in self.window_texts()).strip()

    def window_texts(self) -> list[tuple[int, str]]:
        done = {d.window: d.text for d in self.done}
        live: dict[int, str] = {}
        for r in self.rows:
            if r.event.window not in done and not r.event.is_special:
                live[r.event.window] = live.get(r.event.window, "") + r.event.text
        return sorted({**live, **done}.items())

    def series(self) -> dict[str, np.ndarray]:
        rows = self.rows
        return {
            "x": np.array([r.x for r in rows], dtype=float),
            "cache_len": np.array([r.event.cache_len for r in rows], dtype=float),
            "cache_mb": np.array([r.event.cache_bytes / 1e6 for r in rows], dtype=float),
            "runner_ms": np.array([r.event.ms for r in rows], dtype=float),
            "host_ms": np.array([r.host_ms for r in rows], dtype=float),
            "eot_prob": np.array([r.event.eot_prob for r in rows], dtype=float),
        }

    def bytes_per_token(self) -> float:
        for r in self.rows:
            if r.event.cache_len and r.event.cache_bytes:  # an uncached run reports no cache bytes
                return r.event.cache_bytes / r.event.cache_len
        return 2 * 6 * 512 * 4  # fp32 self K and V over 6 layers, per position

    def decode_ms_per_token(self) -> float | None:
        """Median runner time per token, leaving out step 0 (it carries the SOT prefix)."""
        ms = [r.event.ms for r in self.rows if r.event.step > 0]
        return float(np.median(ms)) if ms else None

    def decode_ms_total(self) -> float:
        return float(sum(r.event.ms for r in self.rows))

    def label(self) -> str:
        reason = self.stop_reason or "running"
        return f"#{self.id} {self.audio_name} · {self.options.label()} · {len(self.rows)} tok · {reason}"
