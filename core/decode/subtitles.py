"""Subtitles of a transcript: SRT and WebVTT text.

With word timings (`phrase_cues`), cues are phrases of the words: at most two lines of about 42
characters and 7 s. Otherwise the cues are the transcript's timed segments (timestamps mode). A window
without segments (no timestamps asked for, or a window cut off before its done event) is one cue over its
30 s, clamped to the start of the next window and the end of the audio. Windows under Whisper's no-speech
rule get no cue, as they get no text.

Cues never overlap (`apart`): whatever made them (a live stream's commits, word times of two windows, segments),
each ends where the next starts at the latest, and SRT and WebVTT are written from them so.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.decode.transcript import Transcript
from core.model.audio import SAMPLE_RATE
from core.model.mel import WINDOW_SAMPLES

WINDOW_S = WINDOW_SAMPLES / SAMPLE_RATE
LINE_CHARS = 42      # subtitle lines of about 42 characters, two a cue, 7 s at most (common broadcast limits)
CUE_S = 7.0
SENTENCE_ENDS = (".", "?", "!", "。", "？", "！")
MIN_CUE_S = 0.1      # a cue cut back to the next one's start keeps at least this long (the next one starts later)


@dataclass
class Cue:
    start: float
    end: float
    text: str


def cues(transcript: Transcript, duration_s: float = 0.0) -> list[Cue]:
    """The subtitle cues of a transcript of `duration_s` seconds of audio (0: unknown, nothing clamped)."""
    out: list[Cue] = []
    # Runners that predate offset_s send 0 for every window; without timestamps they are 30 s apart.
    starts = {w.window: w.offset_s or w.window * WINDOW_S for w in transcript.windows}
    for w in transcript.shown_windows:
        if w.segments:
            out += [Cue(float(g["start"]), float(g["end"]), text) for g in w.segments
                    if (text := str(g["text"]).strip())]
            continue
        text = transcript.window_text(w).strip()
        if text:
            start = starts[w.window]
            # Long audio seeks by timestamps: the next window may start before this one's 30 s are over.
            end = min([start + WINDOW_S] + [s for s in starts.values() if s > start])
            end = min(end, duration_s) if duration_s > start else end
            out.append(Cue(start, end, text))
    return out


def word_cues(words) -> list[Cue]:
    """One cue per word (core/decode/word_timing.py's Word, or dicts with word/start/end), for per-word SRT/VTT."""
    out = []
    for w in words:
        w = w if isinstance(w, dict) else w.to_dict()
        if text := str(w["word"]).strip():
            out.append(Cue(float(w["start"]), max(float(w["end"]), float(w["start"])), text))
    return out


def phrase_cues(words, line_chars: int = LINE_CHARS, cue_s: float = CUE_S) -> list[Cue]:
    """Subtitle cues from timed words (Word, or dicts with word/start/end): each cue at most two lines of
    about `line_chars` characters and `cue_s` seconds, a new cue after a sentence's end."""
    out: list[Cue] = []
    lines: list[str] = []
    start = end = 0.0
    for w in words:
        w = w if isinstance(w, dict) else w.to_dict()
        text, w_start, w_end = str(w["word"]), float(w["start"]), max(float(w["end"]), float(w["start"]))
        if not text.strip():
            continue
        wrapped = _wrapped(lines, text, line_chars)
        if lines and (len(wrapped) > 2 or w_end - start > cue_s):
            out.append(Cue(start, end, "\n".join(lines)))
            lines, wrapped = [], _wrapped([], text, line_chars)
        if not lines:
            start = w_start
        lines, end = wrapped, w_end
        if text.rstrip().endswith(SENTENCE_ENDS):
            out.append(Cue(start, end, "\n".join(lines)))
            lines = []
    if lines:
        out.append(Cue(start, end, "\n".join(lines)))
    return out


def _wrapped(lines: list[str], word: str, line_chars: int) -> list[str]:
    """`lines` with `word` added: on the last line while it fits, else on a new one (a word keeps its
    leading space inside a line and loses it at a line's start; CJK words have none)."""
    if lines and len(lines[-1] + word.rstrip()) <= line_chars:
        return [*lines[:-1], lines[-1] + word.rstrip()]
    return [*lines, word.strip()]


def clock(seconds: float, sep: str = ",") -> str:
    """HH:MM:SS,mmm (SRT) or, with sep=".", HH:MM:SS.mmm (WebVTT)."""
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def apart(cues: list[Cue]) -> list[Cue]:
    """The cues in order of their start, none overlapping the next: a cue that runs past the next one's start ends
    there (a live stream's commits overlapped by 20 ms); one that would be left shorter than MIN_CUE_S keeps that
    long, and the next starts after it. Times are in whole milliseconds, as written."""
    out: list[Cue] = []
    for c in sorted(cues, key=lambda c: c.start):
        start, end = _ms(c.start), _ms(max(c.end, c.start))
        if out and out[-1].end > start:
            before, length = out[-1], end - start
            before.end = max(start, min(before.end, _ms(before.start + MIN_CUE_S)))
            start = before.end
            end = max(end, _ms(start + min(length, MIN_CUE_S)))
        out.append(Cue(start, end, c.text))
    return out


def _ms(seconds: float) -> float:
    return round(seconds * 1000) / 1000


def srt(cues: list[Cue]) -> str:
    return "\n".join(f"{i}\n{clock(c.start, ',')} --> {clock(c.end, ',')}\n{c.text}\n"
                     for i, c in enumerate(apart(cues), 1))


def vtt(cues: list[Cue]) -> str:
    return "WEBVTT\n\n" + "\n".join(f"{clock(c.start, '.')} --> {clock(c.end, '.')}\n{c.text}\n" for c in apart(cues))
