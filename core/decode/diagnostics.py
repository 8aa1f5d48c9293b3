"""Why a decode stopped: the EOT step, the p(EOT) trajectory, each step's strongest rival to EOT,
repetition loops, and a one-line verdict such as `EOT at step 23 (p=0.97)` or
`cache_full at 448 after a 4-gram loop from step 61`.

Pure functions over TokenEvents and per-window stop reasons, so the CLI, the QA report and the GUI
banner all say the same thing. EOT's id is read off the run itself (`eot_token`): a host that only
receives events from a runner needs no tokenizer to diagnose them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from core.decode.attention_focus import Focus, window_focus
from core.decode.events import TokenEvent
from core.decode.quality import WindowQuality

MAX_LOOP_N = 64          # longest n-gram looked for
MIN_LOOP_REPEATS = 3     # a phrase said three times in a row ...
MIN_LOOP_SPAN = 12       # ... and covering this many tokens: "ha ha ha" is speech, 12 × "ha" is a loop


@dataclass
class Loop:
    n: int              # tokens in the repeated n-gram
    start_step: int     # step of the loop's first token
    end_step: int       # step of its last token
    repeats: float      # span / n; fractional when the last repeat is cut short
    ngram: list[int]
    window: int = 0

    @property
    def span(self) -> int:
        return self.end_step - self.start_step + 1


@dataclass
class Rival:
    step: int
    token: int          # strongest non-EOT candidate in the step's top-k; -1 when top-k held only EOT
    logprob: float


@dataclass
class WindowDiagnosis:
    window: int
    reason: str                      # the window's stop reason; "" while it still decodes
    n_steps: int
    last_cache_len: int
    eot_step: int | None             # step that sampled EOT
    eot_prob: float | None           # p(EOT) at that step
    max_eot_prob: float              # highest p(EOT) over the window
    max_eot_step: int | None
    eot_trajectory: list[float]
    rivals: list[Rival]
    loop: Loop | None
    silent: bool = False
    no_speech_prob: float = 0.0
    verdict: str = ""
    quality: WindowQuality | None = None
    eot_focus: Focus | None = None   # where the attention sat at the EOT step (attention and levels known)


@dataclass
class Diagnosis:
    verdict: str
    windows: list[WindowDiagnosis] = field(default_factory=list)
    window: int | None = None        # the window the verdict speaks of

    @property
    def loop(self) -> Loop | None:
        return next((w.loop for w in self.windows if w.loop), None)

    def to_dict(self) -> dict:
        return asdict(self) | {"loop": asdict(self.loop) if self.loop else None}


def find_loop(tokens: list[int], first_step: int = 0, max_n: int = MAX_LOOP_N) -> Loop | None:
    """The longest stretch that repeats one n-gram at least MIN_LOOP_REPEATS times and covers
    MIN_LOOP_SPAN tokens; among equally long stretches, the shortest n-gram (the true period)."""
    best: Loop | None = None
    for n in range(1, min(max_n, len(tokens) // MIN_LOOP_REPEATS) + 1):
        run = 0
        for i in range(n, len(tokens) + 1):
            if i < len(tokens) and tokens[i] == tokens[i - n]:
                run += 1
                continue
            span = run + n   # tokens[i - run - n : i] is periodic with period n
            if run and span >= max(MIN_LOOP_SPAN, MIN_LOOP_REPEATS * n) and (best is None or span > best.span):
                start = i - span
                best = Loop(n, first_step + start, first_step + i - 1, round(span / n, 2), tokens[start:start + n])
            run = 0
    return best


def eot_token(steps: list[TokenEvent], reasons: dict[int, str]) -> int | None:
    """The EOT token's id: the last step of a window that stopped at EOT sampled it (decoding stops there).
    None when no window stopped at EOT; then no step sampled it either."""
    last = {s.window: s for s in steps}
    return next((last[w].token for w, reason in sorted(reasons.items()) if reason == "eot" and w in last), None)


def strongest_rival(step: TokenEvent, eot: int | None) -> Rival:
    for token, logprob in step.top:
        if token != eot:
            return Rival(step.step, token, logprob)
    return Rival(step.step, -1, float("-inf"))


def diagnose_window(steps: list[TokenEvent], reason: str, window: int = 0, eot: int | None = None,
                    silent: bool = False, no_speech_prob: float = 0.0, quality: WindowQuality | None = None,
                    offset_s: float = 0.0, levels: np.ndarray | None = None) -> WindowDiagnosis:
    """Diagnose one window's steps (in order) given the reason its DoneEvent gave; `eot` defaults to
    the window's own (see eot_token). With `levels` (core/decode/attention_focus.py's frame_energy of the
    window's audio, which starts at `offset_s`) and attention on the EOT step, say where it looked."""
    if eot is None and reason == "eot" and steps:
        eot = steps[-1].token
    trajectory = [s.eot_prob for s in steps]
    eot_at = next((s for s in reversed(steps) if s.token == eot), None)
    peak = max(range(len(steps)), key=trajectory.__getitem__, default=None)
    sampled = [s for s in steps if s.token != eot]
    d = WindowDiagnosis(
        window=window, reason=reason, n_steps=len(steps),
        last_cache_len=steps[-1].cache_len if steps else 0,
        eot_step=eot_at.step if eot_at else None, eot_prob=eot_at.eot_prob if eot_at else None,
        max_eot_prob=trajectory[peak] if peak is not None else 0.0,
        max_eot_step=steps[peak].step if peak is not None else None,
        eot_trajectory=trajectory, rivals=[strongest_rival(s, eot) for s in steps],
        loop=find_loop([s.token for s in sampled], sampled[0].step if sampled else 0),
        silent=silent, no_speech_prob=no_speech_prob, quality=quality)
    if reason == "eot" and eot_at is not None and eot_at.attention is not None and levels is not None and len(levels):
        d.eot_focus = window_focus(eot_at.attention, offset_s, levels)
    if d.loop:
        d.loop.window = window
    d.verdict = window_verdict(d)
    return d


def window_verdict(d: WindowDiagnosis) -> str:
    last = d.n_steps - 1
    peak = f"max p(EOT) {d.max_eot_prob:.2f} at step {d.max_eot_step}" if d.max_eot_step is not None else \
        "no steps"
    loop = f" after a {d.loop.n}-gram loop from step {d.loop.start_step}" if d.loop else ""
    if d.reason == "eot":
        focus = f" {d.eot_focus.clause()}" if d.eot_focus else ""
        text = f"EOT at step {d.eot_step} (p={d.eot_prob:.2f}){focus}{loop}"
    elif d.reason == "cache_full":
        text = f"cache_full at {d.last_cache_len}{loop}" + ("" if d.loop else f" with no loop; {peak}")
    elif d.reason == "max_tokens":
        text = f"max_tokens ({d.n_steps}) reached at step {last}{loop}; {peak}"
    elif d.reason == "cancelled":
        text = f"cancelled at step {last}" if d.n_steps else "cancelled before the first token"
    elif d.reason == "error":
        text = f"error after step {last}" if d.n_steps else "error before the first token"
    else:
        text = f"decoding, step {last}" if d.n_steps else "decoding"
    if d.silent:
        text += f"; no speech (p={d.no_speech_prob:.2f}), text hidden"
    if d.quality and d.quality.fallbacks:
        text += f"; {d.quality.fallback_verdict()}"
    return text


def diagnose(steps: list[TokenEvent], reasons: dict[int, str], eot: int | None = None,
             no_speech: dict[int, tuple[bool, float]] | None = None, quality: dict[int, WindowQuality] | None = None,
             levels: dict[int, tuple[float, np.ndarray]] | None = None) -> Diagnosis:
    """Diagnose a run of one or more windows.

    `reasons` maps window → stop reason; `no_speech` window → (silent, no_speech_prob); `quality` window →
    its WindowQuality; `levels` window → (offset_s, frame levels of its audio) for the EOT focus. The run's
    verdict is the first window that did not end cleanly at EOT, else the last window with speech:
    an early cache_full matters more than the clean EOT of a later window, and a trailing scrap of
    silence says nothing about how the speech ended.
    """
    no_speech, quality, levels = no_speech or {}, quality or {}, levels or {}
    if eot is None:
        eot = eot_token(steps, reasons)
    by_window: dict[int, list[TokenEvent]] = {w: [] for w in reasons}
    for s in steps:
        by_window.setdefault(s.window, []).append(s)
    windows = [diagnose_window(ws, reasons.get(w, ""), w, eot, *no_speech.get(w, (False, 0.0)), quality.get(w),
                               *levels.get(w, (0.0, None)))
               for w, ws in sorted(by_window.items())]
    if not windows:
        return Diagnosis("no tokens decoded", [])
    spoken = [w for w in windows if not w.silent] or windows
    worst = next((w for w in windows if w.reason not in ("eot", "")), spoken[-1])
    prefix = f"window {worst.window}: " if len(windows) > 1 else ""
    return Diagnosis(prefix + worst.verdict, windows, worst.window)


def diagnose_transcript(transcript, eot: int | None = None, levels: dict[int, np.ndarray] | None = None) -> Diagnosis:
    """`diagnose` over a core.decode.transcript.Transcript; `levels`: window → frame_energy of its audio
    (core/decode/attention_focus.py), from the host's own mel, for the EOT focus."""
    levels = levels or {}
    return diagnose(transcript.steps, {w.window: w.reason for w in transcript.windows}, eot,
                    {w.window: (w.silent, w.no_speech_prob) for w in transcript.windows},
                    {w.window: w.quality for w in transcript.windows if w.quality},
                    {w.window: (w.offset_s, levels[w.window]) for w in transcript.windows if w.window in levels})
