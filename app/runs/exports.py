"""Transcript TXT, SRT/VTT subtitles, token CSV and session JSON, written from run records."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Callable

from app.runs.record import RunRecord
from app.runs.session import Session
from app.runs.words import window_word_rows
from core.decode import subtitles

CSV_COLUMNS = ("step", "window", "token", "text", "logprob", "p_eot", "top", "cache_len", "cache_bytes",
               "runner_ms", "host_ms")


def transcript_txt(run: RunRecord) -> str:
    return run.text() + "\n"


def cues(run: RunRecord) -> list[subtitles.Cue]:
    """The transcript's cues: phrases of its timed words when every shown window has them (at most two
    lines of ~42 characters and 7 s), else its segments or windows; a live stream's are its commits (its
    passes overlap, its commits do not)."""
    if run.live is not None:
        return [subtitles.Cue(float(c["start_s"]), float(c["end_s"]), text) for c in run.live.get("commits", [])
                if (text := str(c["text"]).strip())]
    words = [[word for word, _ in window_word_rows(run, w.window)] for w in run.transcript.shown_windows]
    if words and all(words):
        return subtitles.phrase_cues([word for window in words for word in window])
    return subtitles.cues(run.transcript, run.duration_s)


def srt(run: RunRecord) -> str:
    return subtitles.srt(cues(run))


def vtt(run: RunRecord) -> str:
    return subtitles.vtt(cues(run))


def token_csv(run: RunRecord, name_of: Callable[[int], str] = str) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_COLUMNS)
    for r in run.rows:
        ev = r.event
        top = " ".join(f"{name_of(t)!r}:{lp:.3f}" for t, lp in ev.top)
        writer.writerow([r.x, ev.window, ev.token, ev.text, f"{ev.logprob:.5f}", f"{ev.eot_prob:.6g}", top,
                         ev.cache_len, ev.cache_bytes, f"{ev.ms:.3f}", f"{r.host_ms:.3f}"])
    return buf.getvalue()


def session_json(session: Session) -> str:
    # One line, no indentation: indented, each number of every token's top-k took a line of its own.
    return json.dumps(session.to_dict(), ensure_ascii=False, separators=(",", ":"))


WRITERS = {
    ".txt": transcript_txt,
    ".srt": srt,
    ".vtt": vtt,
    ".csv": token_csv,
}


def write_run(run: RunRecord, path: str | Path, name_of: Callable[[int], str] = str) -> Path:
    path = Path(path)
    writer = WRITERS[path.suffix.lower()]
    text = writer(run, name_of) if writer is token_csv else writer(run)
    path.write_text(text, encoding="utf-8")
    return path


def write_session(session: Session, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(session_json(session), encoding="utf-8")
    session.saved_through = max((r.id for r in session.runs), default=0)
    return path
