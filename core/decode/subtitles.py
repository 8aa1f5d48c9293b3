"""Subtitles of a transcript: SRT and WebVTT text.

The cues are the transcript's timed segments (timestamps mode). A window without segments (no
timestamps asked for, or a window cut off before its done event) is one cue over its 30 s, clamped to
the start of the next window and the end of the audio. Windows under Whisper's no-speech rule get no cue,
as they get no text.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.decode.transcript import Transcript
from core.model.audio import SAMPLE_RATE
from core.model.mel import WINDOW_SAMPLES

WINDOW_S = WINDOW_SAMPLES / SAMPLE_RATE


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


def clock(seconds: float, sep: str = ",") -> str:
    """HH:MM:SS,mmm (SRT) or, with sep=".", HH:MM:SS.mmm (WebVTT)."""
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def srt(cues: list[Cue]) -> str:
    return "\n".join(f"{i}\n{clock(c.start, ',')} --> {clock(c.end, ',')}\n{c.text}\n" for i, c in enumerate(cues, 1))


def vtt(cues: list[Cue]) -> str:
    return "WEBVTT\n\n" + "\n".join(f"{clock(c.start, '.')} --> {clock(c.end, '.')}\n{c.text}\n" for c in cues)
