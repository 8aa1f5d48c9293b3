"""Running a QA suite: decode each clip, score it against its reference, diagnose how it stopped.

Where the model runs is the caller's business: `decode(mel, options, n_frames)` decodes one window and yields
core.decode.events (device/link/decoder.py's decoders, in process or on a runner, are such); the clip's windows
come from the host's one seek loop (core/decode/window_feed.py). A decode that also has a `samples` list (the
board's `sample` events, appended as they come) gives each clip its `board` cost.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Iterable

import numpy as np

from core.decode.attention_focus import eot_focus, frame_energy
from core.decode.diagnostics import Diagnosis, WindowDiagnosis, diagnose_transcript
from core.decode.events import Event
from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from core.decode.window_choice import WindowMisfit, WindowRule
from core.decode.window_feed import HeldMels, decode_source
from core.errors import WhisperKVError
from core.model.audio import SAMPLE_RATE, load_audio
from core.model.dims import FULL_WINDOW_S
from core.model.mel import content_frames, mel_windows
from core.model.npu_profile import profiles, to_json
from core.model.placement import RanOn
from core.qa.attention_map import attention_map
from core.qa.board_cost import clip_cost
from core.qa.floor import hold_to_floor
from core.qa.scoring import error_rate
from core.qa.suite import Clip, Suite

# One window's decode (core.decode.window_feed.DecodeOne); the suite's seek loop is the host's one.
Decode = Callable[[np.ndarray, DecodeOptions, int], Iterable[Event]]
# One row per clip, as the CLI table, the HTML summary and the GUI QA tab all show it.
REUSED = "encoder reused"      # a timing cell of a clip whose encoder output came from an earlier run
SUMMARY_COLUMNS = ("clip", "result", "error rate", "limit", "stop", "tokens", "encoder ms", "ms/token p50",
                   "p95", "RTF", "ran on", "why it stopped")


@dataclass
class ClipResult:
    name: str
    audio: str
    language: str
    metric: str                   # "wer" | "cer"
    max_error: float
    reference: str
    text: str = ""
    error_rate: float | None = None
    passed: bool = False
    failures: list[str] = field(default_factory=list)   # why it failed, one phrase each
    stop_reason: str = ""
    verdict: str = ""
    detected_language: str = ""
    tokens: int = 0
    token_ids: list[int] = field(default_factory=list)   # what devices are compared by
    steps: int = 0
    encoder_ms: float = 0.0
    decode_ms: float = 0.0
    per_token_ms_p50: float | None = None
    per_token_ms_p95: float | None = None
    wall_ms: float = 0.0          # host-side, from sending the mel to the last event
    duration_s: float = 0.0
    rtf: float | None = None      # wall_ms / audio duration: under 1 is faster than real time
    segments: list[dict] = field(default_factory=list)
    loop: dict | None = None
    windows: list[dict] = field(default_factory=list)     # per window: reason, EOT step and p, loop, verdict
    series: dict[str, list] = field(default_factory=dict)  # per step: eot_prob, rival token and p, ms, cache_len
    error: str = ""               # the clip could not be decoded to its end (`text` holds what was decoded)
    focus: str = ""               # where the EOT step looked, e.g. "EOT while attention was at 10.6 s of 11.0 s (...)"
    attention: dict | None = None  # a failing clip's cross-attention heatmap (core/qa/attention_map.py)
    encoder_reused: bool = False  # the runner reused an earlier encoder output: encoder ms and RTF are not this clip's
    board: dict | None = None     # what it cost the board, and whether it ran hot (core/qa/board_cost.py)
    ran_on: str = ""              # where its graphs ran: NPU, CPU, or a delegate's share (core/qa/floor.py)
    tokens_per_s: float | None = None   # decoder steps per second of decode time (core/qa/floor.py)
    npu_profile: list[dict] | None = None   # the Neuron profiler's per-op times a graph (core/model/npu_profile.py)
    window_s: int = FULL_WINDOW_S  # the encoder window it was decoded in (qa --window)

    def to_dict(self) -> dict:
        return asdict(self)

    def summary_cells(self) -> tuple[str, ...]:
        """This clip's SUMMARY_COLUMNS as text."""
        return (self.name, "PASS" if self.passed else "FAIL", f"{self.metric.upper()} {_fmt(self.error_rate, '.3f')}",
                f"{self.max_error:.2f}", self.stop_reason, str(self.tokens),
                REUSED if self.encoder_reused else _fmt(self.encoder_ms, ".0f"),
                _fmt(self.per_token_ms_p50), _fmt(self.per_token_ms_p95),
                f"{_fmt(self.rtf, '.2f')} ({REUSED})" if self.encoder_reused else _fmt(self.rtf, ".2f"),
                self.ran_on or "-", self.verdict)


@dataclass
class SuiteResult:
    suite: str
    path: str
    results: list[ClipResult] = field(default_factory=list)
    meta: dict = field(default_factory=dict)   # device, backend, cache ... as the caller knows them

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def n_passed(self) -> int:
        return sum(r.passed for r in self.results)

    def to_dict(self) -> dict:
        return {"suite": self.suite, "path": self.path, "passed": self.passed, "n_clips": len(self.results),
                "n_passed": self.n_passed, "meta": self.meta, "clips": [r.to_dict() for r in self.results]}


def _fmt(v, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def _ms(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)


def score(clip: Clip, transcript: Transcript, wall_ms: float, duration_s: float,
          energy: np.ndarray | None = None) -> ClipResult:
    """A ClipResult from a finished decode: error rate, pass/fail with reasons, timing, verdict, where the EOT
    step looked (`energy`: core.decode.attention_focus.frame_energy of the audio, to say what was there), and
    for a failing clip the attention heatmap."""
    s = transcript.summary()
    diagnosis = diagnose_transcript(transcript)
    rate = error_rate(clip.reference, transcript.text, clip.language)
    failures = []
    if rate > clip.max_error:
        failures.append(f"{clip.metric.upper()} {rate:.3f} > {clip.max_error:.2f}")
    if clip.expect_stop and any(w.reason not in clip.expect_stop for w in transcript.windows):
        failures.append(f"stopped: {diagnosis.verdict} (expected {' or '.join(clip.expect_stop)})")
    if s["language"] and s["language"] != clip.language:
        failures.append(f"decoded as {s['language']}, expected {clip.language}")
    ms = transcript.per_token_ms()
    focus = eot_focus(transcript.windows, transcript.steps, energy, duration_s)
    heatmap = attention_map(transcript.steps, {w.window: w.offset_s for w in transcript.windows},
                            {w.window: w.reason for w in transcript.windows}, duration_s) if failures else None
    return ClipResult(
        name=clip.name, audio=str(clip.audio), language=clip.language, metric=clip.metric,
        max_error=clip.max_error, reference=clip.reference, text=transcript.text, error_rate=round(rate, 4),
        window_s=transcript.windows[0].window_s if transcript.windows else FULL_WINDOW_S, passed=not failures,
        failures=failures, stop_reason=transcript.stop_reason, verdict=diagnosis.verdict,
        detected_language=s["language"], tokens=transcript.token_count,
        token_ids=list(transcript.tokens), steps=len(transcript.steps),
        encoder_ms=_ms(transcript.encoder_ms), decode_ms=s["decode_ms"],
        per_token_ms_p50=_ms(np.percentile(ms, 50)) if ms else None,
        per_token_ms_p95=_ms(np.percentile(ms, 95)) if ms else None,
        wall_ms=_ms(wall_ms), duration_s=round(duration_s, 3),
        rtf=round(wall_ms / 1e3 / duration_s, 4) if duration_s > 0 else None,
        segments=list(transcript.segments), loop=asdict(diagnosis.loop) if diagnosis.loop else None,
        windows=[_window_summary(w) for w in diagnosis.windows],
        series=_series(transcript.steps, diagnosis), focus=focus.describe() if focus else "", attention=heatmap,
        encoder_reused=any(w.cache_hit for w in transcript.windows))


def _window_summary(w: WindowDiagnosis) -> dict:
    keys = ("window", "reason", "n_steps", "eot_step", "eot_prob", "max_eot_prob", "max_eot_step", "silent",
            "no_speech_prob", "verdict")
    return {k: getattr(w, k) for k in keys} | {"loop": asdict(w.loop) if w.loop else None}


def _series(steps: list, diagnosis: Diagnosis) -> dict[str, list]:
    rivals = [r for w in diagnosis.windows for r in w.rivals]
    return {"window": [e.window for e in steps], "step": [e.step for e in steps],
            "eot_prob": [round(e.eot_prob, 6) for e in steps],
            "rival_token": [r.token for r in rivals],
            "rival_prob": [round(float(np.exp(r.logprob)), 6) for r in rivals],
            "ms": [round(e.ms, 3) for e in steps], "cache_len": [e.cache_len for e in steps]}


def failed(clip: Clip, error: WhisperKVError, partial: Transcript | None = None) -> ClipResult:
    """A clip that could not be decoded to its end, with the text decoded before the failure (if any)."""
    return ClipResult(name=clip.name, audio=str(clip.audio), language=clip.language, metric=clip.metric,
                      max_error=clip.max_error, reference=clip.reference, stop_reason="error",
                      text=partial.live_text if partial is not None else "",
                      steps=len(partial.steps) if partial is not None else 0,
                      verdict=f"error: {error.problem}", failures=[str(error)], error=str(error))


class ClipFailed(WhisperKVError):
    """A decode failed part-way: `result` is the failed clip with its partial text, `cause` the error."""

    def __init__(self, result: ClipResult, cause: WhisperKVError):
        super().__init__(cause.problem, cause.fix)
        self.result, self.cause = result, cause


def run_clip(clip: Clip, decode: Decode, cache: bool = True, timestamps: bool | None = None,
             on_event: Callable[[Event], None] | None = None, window: WindowRule = WindowRule()) -> ClipResult:
    """Decode and score one clip, in the encoder window `window` picks for it among those the decoder's runner
    serves (its hello's). Audio that fails to load raises (a setup error, not a clip failure); a decode that fails
    part-way raises ClipFailed, holding the clip's result with its partial text, as does a window the clip does not
    fit."""
    audio = load_audio(clip.audio)
    mels = HeldMels(mel_windows(audio), content_frames(audio))
    transcript = Transcript()
    samples = getattr(decode, "samples", None)     # what the board reports, for all of a decoder's requests
    seen = len(samples) if samples is not None else 0
    reports = getattr(decode, "npu_reports", None)  # the Neuron profiler's, from a runner started with it on
    seen_reports = len(reports) if reports is not None else 0
    t0 = time.perf_counter()
    # Attention: the report shows where a failing clip's decoder looked, and where EOT looked.
    options = clip.options(cache=cache, timestamps=timestamps)
    # No attention output from the uncached reference, nor from a decoder that does not serve it (a .dla): the
    # heatmap is only the report's.
    takes = getattr(decode, "takes", None)
    options = options.with_attention(takes is None or takes("attention"))
    try:
        windows = getattr(getattr(decode, "info", None), "windows", None)
        options = replace(options, window_s=window.window_for(mels.n_frames, windows))
    except WindowMisfit as exc:
        raise ClipFailed(failed(clip, exc), exc) from None
    try:
        for ev in decode_source(mels, options, decode):
            transcript.add(ev)
            if on_event is not None:
                on_event(ev)
    except WhisperKVError as exc:
        raise ClipFailed(failed(clip, exc, transcript), exc) from exc
    result = score(clip, transcript, (time.perf_counter() - t0) * 1e3, len(audio) / SAMPLE_RATE,
                   frame_energy(mels.mels, mels.n_frames))
    result.board = clip_cost(samples[seen:]) if samples else None
    if reports:
        result.npu_profile = to_json(profiles(decode.npu_files(seen_reports))) or None
    return result


def run_suite(suite: Suite, decode: Decode, cache: bool = True, timestamps: bool | None = None,
              on_result: Callable[[int, ClipResult], None] | None = None,
              on_event: Callable[[int, Event], None] | None = None,
              should_stop: Callable[[], bool] = lambda: False,
              clip_errors: tuple[type[WhisperKVError], ...] = (), meta: dict | None = None,
              window: WindowRule = WindowRule()) -> SuiteResult:
    """Every clip in order. A `clip_errors` exception (say, the runner refusing one request) fails
    that clip and the suite goes on; anything else (link lost, bad audio) propagates as a setup error, after
    the clip it broke is reported failed with the text decoded before it. A clip that does not fit the `window`
    asked for fails alone."""
    result = SuiteResult(suite.name, str(suite.path), meta=dict(meta or {}))
    for i, clip in enumerate(suite.clips):
        if should_stop():
            break
        forward = (lambda ev, i=i: on_event(i, ev)) if on_event else None
        fatal = None
        try:
            r = run_clip(clip, decode, cache, timestamps, forward, window)
        except ClipFailed as exc:
            r, fatal = exc.result, None if isinstance(exc.cause, (*clip_errors, WindowMisfit)) else exc.cause
        else:
            hold_to_floor(clip, r, RanOn.from_dict(result.meta.get("ran_on")))
        result.results.append(r)
        if on_result is not None:
            on_result(i, r)
        if fatal is not None:
            raise fatal
    return result
