"""The banner above the transcript that says why decoding stopped."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel

from app.runs.focus import eot_focus
from app.runs.record import RunRecord
from core.model.dims import ModelDims

STYLES = {
    "eot": ("#1b5e20", "#c8e6c9", "Stopped at EOT — the model ended the transcript"),
    "cache_full": ("#b71c1c", "#ffcdd2", "Stopped: cache full — all {ceiling} decoder positions used"),
    "max_tokens": ("#e65100", "#ffe0b2", "Stopped: max tokens reached"),
    "cancelled": ("#37474f", "#cfd8dc", "Cancelled"),
    "error": ("#b71c1c", "#ffcdd2", "Error"),
    "running": ("#0d47a1", "#bbdefb", "Decoding…"),
    # A live stream's ends are normal outcomes, not failures: neutral, never the error style.
    "end of stream": ("#263238", "#e3eaef", "Live stream ended — the whole audio was heard"),
    "stopped": ("#263238", "#e3eaef", "Live stream stopped — everything confirmed so far is kept"),
    "streaming": ("#0d47a1", "#bbdefb", "Streaming live…"),
    "loading": ("#4a148c", "#e1bee7", "Starting the runner and loading the model…"),
}


def live_detail(run: RunRecord) -> str:
    """A live stream's end in figures: not its last pass's verdict, which says nothing about the stream."""
    live = run.live or {}
    words = len(live.get("text", "").split())
    parts = [f"{words} word{'s' if words != 1 else ''}", f"{len(live.get('passes', []))} passes"]
    if live.get("audio_s"):
        parts.append(f"{live['audio_s']:.1f} s of audio")
    lag = (live.get("lag_s") or {}).get("median")
    if lag is not None:
        parts.append(f"text {lag:.1f} s behind the speaker (median)")
    return " · ".join(parts)


def verdict(run: RunRecord) -> str:
    """The one-line "why it stopped" the CLI and the QA report print too, where the EOT step looked, and the
    token count."""
    try:
        why = run.verdict()
        focus = eot_focus(run) if run.stop_reason == "eot" else None
    except Exception:  # a runner that breaks an assumption of the diagnosis must not break the window
        why, focus = run.stop_reason or "", None
    if focus is not None:
        why = f"{why} · {focus.describe()}"
    if not run.rows:
        return why
    # The picker's count (RunRecord.token_count: text tokens, not EOT or timestamps), so the two never disagree.
    return f"{why} · {run.token_count()} tokens, cache {run.rows[-1].event.cache_len}/{run.cache_ceiling()}"


class StopBanner(QLabel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.reason: str | None = None
        self.setWordWrap(True)
        # Two lines, always: a banner that grows when its text does (the verdict, where EOT looked) relays
        # out the window and redraws every plot, a 50-100 ms stall as a run ends.
        self.setFixedHeight(2 * self.fontMetrics().lineSpacing() + 16)
        self.show_reason(None)

    def show_reason(self, reason: str | None, detail: str = "", ceiling: int | None = None) -> None:
        self.reason = reason
        if reason is None:
            self.setText("")
            self.setStyleSheet("")
            self.hide()
            return
        fg, bg, text = STYLES.get(reason, STYLES["error"])
        text = text.format(ceiling=ceiling or ModelDims().n_text_ctx)
        self.setText(f"{text}{' — ' + detail if detail else ''}")
        self.setToolTip(self.text())   # the whole of it, should a narrow window need more than two lines
        self.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg}; padding: 6px; border-radius: 4px; font-weight: bold; }}")
        self.show()

    def refresh(self, run: RunRecord) -> None:      # a run view (app/views/view_table.py)
        self.show_run(run)

    def show_run(self, run: RunRecord | None) -> None:
        if run is None:
            self.show_reason(None)
            return
        reason = run.stop_reason
        if reason is None:
            # No live count here: a banner whose text changes every frame relays out the whole window.
            phase = "loading" if run.phase == "loading" else "streaming" if run.live is not None else "running"
            if self.reason != phase:
                self.show_reason(phase)
            return
        detail = live_detail(run) if run.live is not None else verdict(run)
        if reason == "error" and run.error:
            detail = f"{run.error.get('problem', '')} ({detail})"
        self.show_reason(reason, detail, run.cache_ceiling())
