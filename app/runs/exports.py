"""Transcript TXT, SRT/VTT subtitles, token CSV, session JSON and the graphs' PNG, written from run records: the
studio's exports, one row each of EXPORTS, rows of the same kind as the QA report's formats (core/file_formats.py)."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.runs.record import RunRecord
from app.runs.session import Session
from app.runs.words import window_word_rows
from core.decode import subtitles
from core.file_formats import FileFormat, named, text_writer

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


@dataclass
class Exported:
    """What an export writes from: the session, the run on display, the tokens' names and the window's graphs."""
    session: Session
    run: RunRecord | None
    name_of: Callable[[int], str] = str
    graphs_png: Callable[[Path], None] | None = None     # the plots panel's picture, labelled with the run


@dataclass(frozen=True)
class RunExport(FileFormat[Exported]):
    of_run: bool = True        # False: the whole session, there to write before any run


def _text_of_run(render: Callable[[RunRecord], str]) -> Callable[[Exported, Path], None]:
    return text_writer(lambda exported: render(exported.run))


def _token_csv(exported: Exported, path: Path) -> None:
    path.write_text(token_csv(exported.run, exported.name_of), encoding="utf-8")


def _session(exported: Exported, path: Path) -> None:
    write_session(exported.session, path)


def _graphs(exported: Exported, path: Path) -> None:
    exported.graphs_png(path)


# File ▸ Export, one row each: the menu's items ("Transcript (TXT)…") and each save dialog's filter come from here
# (app/views/export_menu.py).
EXPORTS: list[RunExport] = [
    RunExport("txt", ".txt", _text_of_run(transcript_txt), "Transcript", "Text"),
    RunExport("srt", ".srt", _text_of_run(srt), "Subtitles", "SubRip"),
    RunExport("vtt", ".vtt", _text_of_run(vtt), "Subtitles", "WebVTT"),
    RunExport("csv", ".csv", _token_csv, "Token table", "CSV"),
    RunExport("json", ".json", _session, "Session", "JSON", of_run=False),
    RunExport("png", ".png", _graphs, "Graphs", "PNG image"),
]


def export(name: str, exported: Exported, path: str | Path) -> Path:
    """Write the export `name` to `path`, with its suffix."""
    fmt = named(EXPORTS, name)
    path = Path(path).with_suffix(fmt.suffix)
    fmt.write(exported, path)
    return path


def write_session(session: Session, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(session_json(session), encoding="utf-8")
    session.saved_through = max((r.id for r in session.runs), default=0)
    return path
