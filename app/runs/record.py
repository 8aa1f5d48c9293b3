"""One transcription run of the session: core's Transcript of its events, plus what only the app keeps —
every event with its host arrival time, the rows the table and plots show, and the error of a failed run.

Qt-free so that exports, compare and tests can use it without a window.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from core.decode.diagnostics import diagnose_transcript
from core.decode.events import TokenEvent
from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from core.model.dims import ModelDims


def cache_ceiling(runner: dict) -> int:
    """Decoder positions the self K/V cache holds: the runner's hello says (cache.max_len), else the model's
    text context."""
    return int(runner.get("cache_max_len") or ModelDims().n_text_ctx)


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
    options: DecodeOptions
    device: str = "local"
    device_info: dict = field(default_factory=dict)  # device-info and the runner's hello summary
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))
    duration_s: float = 0.0
    events: list = field(default_factory=list)       # EncodedEvent | TokenEvent | DoneEvent
    arrivals_ms: list = field(default_factory=list)  # one per event, since the request was sent
    rows: list = field(default_factory=list)         # TokenRow per TokenEvent
    transcript: Transcript = field(default_factory=Transcript)
    error: dict | None = None                        # {"problem", "fix", "code"} when the run failed
    runner_loading: bool = False                     # the runner was starting for this run (until its first event)
    live: dict | None = None                         # a live stream's summary (app/runs/live.py); None offline
    qa_floor: dict = field(default_factory=dict)     # its device profile's QA floor (DeviceProfile.qa_floor)
    npu_profile: list | None = None                  # the Neuron profiler's per-op times a graph; None: not profiled
    clip: object = None                              # the AudioClip decoded (not in the session file): plays spans
    audio_path: str = ""                             # the clip's file and its sha256 (in the session file): the
    audio_sha256: str = ""                           # audio is found again, or said to be gone, when the run is shown
    derived: dict = field(default_factory=dict, repr=False, compare=False)  # words per window, energy: computed once

    def add(self, event, arrival_ms: float) -> TokenRow | None:
        previous = self.arrivals_ms[-1] if self.arrivals_ms else 0.0
        self.events.append(event)
        self.arrivals_ms.append(arrival_ms)
        self.transcript.add(event)
        if isinstance(event, TokenEvent):
            row = TokenRow(len(self.rows), event, arrival_ms - previous, arrival_ms)
            self.rows.append(row)
            return row
        return None

    def add_batch(self, batch: list) -> None:
        """[(event, host arrival ms)] as the workers hand them over."""
        for event, arrival_ms in batch:
            self.add(event, arrival_ms)

    # --- what the views and exports read -------------------------------------------------

    @property
    def phase(self) -> str:
        """loading (the runner starts and loads its model), decoding, or the stop reason."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "loading" if self.runner_loading and not self.events else "decoding"

    @property
    def stop_reason(self) -> str | None:
        """None while the run decodes; "error" for a failed run; how a live stream ended ("stopped", "end of
        stream"); else the last window's reason."""
        if self.error is not None:
            return "error"
        if self.live is not None:
            return self.live.get("end") or None
        return self.transcript.stop_reason or None

    @property
    def finished_windows(self) -> list:
        """The transcript's windows that have their done event, in order."""
        return [w for w in self.transcript.windows if w.reason]

    @property
    def encoder_ms(self) -> float | None:
        windows = self.transcript.windows
        return windows[0].encoder_ms if windows else None

    @property
    def ttft_ms(self) -> float | None:
        return self.rows[0].arrival_ms if self.rows else None

    def text(self) -> str:
        """The transcript, and while a window decodes (or after a failure part-way) its tokens so far. A live
        stream's text is what it committed, not its passes one after another."""
        if self.live is not None:
            return self.live.get("text", "")
        return self.transcript.live_text

    def verdict(self) -> str:
        """One line, the same the CLI and the QA report print, e.g. `EOT at step 23 (p=0.97)`."""
        return diagnose_transcript(self.transcript).verdict

    def series(self) -> dict[str, np.ndarray]:
        rows = self.rows
        return {
            "x": np.array([r.x for r in rows], dtype=float),
            "cache_len": np.array([r.event.cache_len for r in rows], dtype=float),
            "cache_mb": np.array([r.event.cache_bytes / 1e6 for r in rows], dtype=float),
            "runner_ms": np.array([r.event.ms for r in rows], dtype=float),
            "host_ms": np.array([r.host_ms for r in rows], dtype=float),
            "eot_prob": np.array([r.event.eot_prob for r in rows], dtype=float),
            "drafted": np.array([r.event.drafted for r in rows], dtype=bool),
        }

    def cache_ceiling(self) -> int:
        return cache_ceiling(self.device_info)

    def bytes_per_token(self) -> float:
        for r in self.rows:
            if r.event.cache_len and r.event.cache_bytes:  # an uncached run reports no cache bytes
                return r.event.cache_bytes / r.event.cache_len
        return float(self.device_info.get("bytes_per_token") or ModelDims().cache_bytes_per_token())

    def decode_ms_per_token(self) -> float | None:
        """Median runner time per token over the tokens that ran a graph: not step 0 (it carries the SOT prefix),
        nor a token served from a live pass's draft (no graph call of its own, about 0 ms), as the latency graph."""
        ms = [s.ms for s in self.transcript.steps if s.step > 0 and not s.drafted]
        return float(np.median(ms)) if ms else None

    def drafted_count(self) -> int:
        """Tokens served from a live pass's draft (DecodeOptions.draft), which ran no graph of their own."""
        return sum(1 for s in self.transcript.steps if s.drafted)

    def decode_ms_total(self) -> float:
        return float(sum(s.ms for s in self.transcript.steps))

    def token_count(self) -> int:
        """What the picker and the QA table count: the transcript's text tokens (a live stream: every step)."""
        return len(self.rows) if self.live is not None else self.transcript.token_count

    def label(self) -> str:
        if self.live is not None:     # counted in passes: a stream's token rows are its passes' hypotheses
            passes = len(self.transcript.windows)
            return (f"#{self.id} live: {self.audio_name} · {self.options.language_label} · "
                    f"{passes} pass{'es' if passes != 1 else ''} · {self.stop_reason or 'streaming'}")
        reason = self.stop_reason or "running"
        return f"#{self.id} {self.audio_name} · {self.options.label(self.transcript.language)} · " \
               f"{self.token_count()} tok · {reason}{self.model_form()}"

    def model_form(self) -> str:
        """The weights' dtype and cross form the runner named in its hello, as " · a16w8 kv" ("" before it did)."""
        info = self.device_info
        form = " ".join(filter(None, (info.get("dtype"), info.get("cross"))))
        return f" · {form}" if form else ""
