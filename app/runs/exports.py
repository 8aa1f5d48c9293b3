"""Transcript TXT, SRT/VTT subtitles, token CSV and session JSON, written from run records."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.runs.record import RunRecord
from app.runs.session import Session

WINDOW_S = 30.0
TIMESTAMP_BEGIN = 50364  # <|0.00|>; each later id adds 20 ms
CSV_COLUMNS = ("step", "window", "token", "text", "logprob", "p_eot", "top", "cache_len", "cache_bytes",
               "runner_ms", "host_ms")


@dataclass
class Cue:
    start: float
    end: float
    text: str


def transcript_txt(run: RunRecord) -> str:
    return run.text() + "\n"


def cues(run: RunRecord) -> list[Cue]:
    """The runner's timestamp segments when it sent them, else segments from timestamp tokens,
    else one cue per 30 s window."""
    out: list[Cue] = []
    done = {d.window: d for d in run.done}
    for window, text in run.window_texts():
        d = done.get(window)
        if d is not None and d.segments:
            out += [Cue(float(g["start"]), float(g["end"]), str(g["text"]).strip()) for g in d.segments
                    if str(g["text"]).strip()]
            continue
        offset = d.offset_s if d is not None and d.offset_s else window * WINDOW_S
        stamped = _timestamped(run, window, offset)
        if stamped:
            out += stamped
        elif text.strip():
            end = min(offset + WINDOW_S, run.duration_s) if run.duration_s > offset else offset + WINDOW_S
            out.append(Cue(offset, end, text.strip()))
    return out


def _timestamped(run: RunRecord, window: int, offset: float) -> list[Cue]:
    found, start, text = [], None, ""
    for r in run.rows:
        ev = r.event
        if ev.window != window:
            continue
        if ev.token >= TIMESTAMP_BEGIN:
            t = offset + (ev.token - TIMESTAMP_BEGIN) * 0.02
            if start is None:
                start = t
            else:
                if text.strip():
                    found.append(Cue(start, t, text.strip()))
                start, text = None, ""
        elif not ev.is_special:
            text += ev.text
    return found


def _clock(seconds: float, sep: str) -> str:
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def srt(run: RunRecord) -> str:
    blocks = [f"{i}\n{_clock(c.start, ',')} --> {_clock(c.end, ',')}\n{c.text}\n" for i, c in enumerate(cues(run), 1)]
    return "\n".join(blocks)


def vtt(run: RunRecord) -> str:
    blocks = [f"{_clock(c.start, '.')} --> {_clock(c.end, '.')}\n{c.text}\n" for c in cues(run)]
    return "WEBVTT\n\n" + "\n".join(blocks)


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
    return json.dumps(session.to_dict(), ensure_ascii=False, indent=1)


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
    return path
