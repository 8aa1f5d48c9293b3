"""The compare verdict between two runs, e.g. cache on against cache off on the same audio."""
from __future__ import annotations

from dataclasses import dataclass

from app.runs.record import RunRecord
from core.decode.events import EncodedEvent
from core.qa.scoring import error_rate, uses_cer

WARM_UP_FACTOR = 10.0     # a step this many times the run's median is a one-off, not decoding
WARM_UP_MIN_MS = 100.0


@dataclass
class Comparison:
    per_token_speedup: float | None   # slower median ms/token ÷ faster one
    total_speedup: float | None       # slower decode total ÷ faster one
    faster: RunRecord | None
    slower: RunRecord | None
    same_tokens: bool
    texts: str = ""                   # how a live run's text compares with the other's ("" for two offline runs)
    steady_speedup: float | None = None  # whole decode without one-off warm-up steps, when a run had any

    def sentence(self) -> str:
        if self.faster is None or self.per_token_speedup is None:
            return "Pick two finished runs that decoded at least two tokens each."
        f, s = self.faster, self.slower
        fm, sm = f.decode_ms_per_token(), s.decode_ms_per_token()
        text = (f"#{f.id} ({_what(f)}) is {self.per_token_speedup:.1f}× faster per token than #{s.id} ({_what(s)}): "
                f"median {fm:.1f} ms vs {sm:.1f} ms")
        drafted = [r for r in (f, s) if r.drafted_count()]
        if drafted:      # served from a live pass's draft, about 0 ms each: not counted, as in the latency graph
            text += " (" + "; ".join(f"#{r.id}'s {drafted_words(r)} left out" for r in drafted) + ")"
        if self.total_speedup:
            text += (f"; whole decode {self.total_speedup:.1f}× "
                     f"({f.decode_ms_total() / 1e3:.2f} s vs {s.decode_ms_total() / 1e3:.2f} s)")
            warm = [r for r in (f, s) if warm_up_ms(r)]
            if warm:
                text += "; " + ", ".join(f"#{r.id} includes a one-off warm-up of {warm_up_ms(r) / 1e3:.2f} s"
                                         f"{' (runner start)' if r.runner_loading else ''}" for r in warm)
                text += (f", steady {self.steady_speedup:.1f}× ({steady_ms(f) / 1e3:.2f} s vs "
                         f"{steady_ms(s) / 1e3:.2f} s)")
        if self.texts:
            text += f". {self.texts}."
        else:
            text += ". Tokens identical." if self.same_tokens else ". Tokens differ."
        cross = [(r, cross_text(r)) for r in (f, s)]
        if all(t for _, t in cross):
            text += " " + "; ".join(f"#{r.id}: {t}" for r, t in cross) + "."
        return text


def drafted_words(run: RunRecord) -> str:
    """e.g. "50 of 95 tokens served from a draft": those ran no graph of their own."""
    n, steps = run.drafted_count(), len(run.transcript.steps)
    return f"{n} of {steps} token{'s' if steps != 1 else ''} served from a draft"


def warm_up_ms(run: RunRecord) -> float:
    """Time the run's steps spent above WARM_UP_FACTOR × its median step: one-off costs such as the first
    build of a graph (the first cache-off run of a runner) or a runner still starting, not decoding."""
    median = run.decode_ms_per_token()
    if not median:
        return 0.0
    bound = WARM_UP_FACTOR * median
    return float(sum(s.ms - median for s in run.transcript.steps if s.ms > max(bound, WARM_UP_MIN_MS)))


def steady_ms(run: RunRecord) -> float:
    """The whole decode as it would be without its warm-up (each such step counted at the median)."""
    return run.decode_ms_total() - warm_up_ms(run)


def same_clip_pair(runs: list[RunRecord]) -> tuple[int, int] | None:
    """The ids Compare starts with: the last run and the latest earlier run of the same audio."""
    if not runs:
        return None
    last = runs[-1]
    for run in reversed(runs[:-1]):
        if run.audio_name == last.audio_name and run.audio_sha256 == last.audio_sha256:
            return run.id, last.id
    return None


def cross_cache(run: RunRecord) -> tuple[str, int] | None:
    """(form, bytes) of the cross state the runner held for the run's first window (core/model/backend.py:
    kv holds every layer's cross K/V, absorbed the encoder output F alone); None if it did not say."""
    for ev in run.events:
        if isinstance(ev, EncodedEvent) and ev.cross_bytes:
            return ev.cross_form or "kv", ev.cross_bytes
    return None


def cross_text(run: RunRecord) -> str:
    """e.g. `cross K/V 36.9 MB` or `cross F 3.1 MB (absorbed)`; "" when unknown."""
    found = cross_cache(run)
    if found is None:
        return ""
    form, size = found
    return f"cross K/V {size / 1e6:.1f} MB" if form == "kv" else f"cross F {size / 1e6:.1f} MB ({form})"


def _what(run: RunRecord) -> str:
    form = (cross_cache(run) or ("kv", 0))[0]
    live = "live, " if run.live is not None else ""
    return (f"{live}cache {'on' if run.options.cache else 'off'}, {run.device}"
            + (f", {form} cross" if form != "kv" else ""))


def preload() -> None:
    """Import the text scorer now, off the UI thread: imported on first use, it took 15-20 ms of the UI thread
    as the first live run ended and the compare view scored its text."""
    import jiwer  # noqa: F401  (lazy by design: this import, off the UI thread, is the preload)


def text_comparison(a: RunRecord, b: RunRecord) -> str:
    """A live run's passes re-decode overlapping audio, so its tokens never line up with another run's: say
    how its committed text scores against the other run's text instead (WER, or CER for zh/ja/…); "" when
    neither run is live."""
    if a.live is None and b.live is None:
        return ""
    live, other = (a, b) if a.live is not None else (b, a)
    language = other.transcript.language or live.transcript.language or "en"
    metric = "CER" if uses_cer(language) else "WER"
    rate = error_rate(other.text(), live.text(), language)
    same = " (the same words)" if rate == 0 else ""
    return f"Text of live #{live.id} against #{other.id}: {metric} {rate:.1%}{same}"


def compare(a: RunRecord, b: RunRecord) -> Comparison:
    ma, mb = a.decode_ms_per_token(), b.decode_ms_per_token()
    same = [r.event.token for r in a.rows] == [r.event.token for r in b.rows]
    if not ma or not mb:
        return Comparison(None, None, None, None, same)
    faster, slower = (a, b) if ma <= mb else (b, a)
    per_token = max(ma, mb) / min(ma, mb)
    tf, ts = faster.decode_ms_total(), slower.decode_ms_total()
    texts = text_comparison(a, b)
    # A live run decodes its audio many times over: its whole-decode time is no measure against a single pass.
    total = ts / tf if tf and not texts else None
    steady = steady_ms(slower) / steady_ms(faster) if total and steady_ms(faster) > 0 else None
    return Comparison(per_token, total, faster, slower, same, texts, steady)
