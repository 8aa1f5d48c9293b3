"""The transcript on stdout as it is decoded, ending exactly as `Transcript.text` says.

A window's text is only final at its `done` event: Whisper's no-speech rule may then hide it. On a
terminal the tokens appear live and a hidden window is wiped (cursor save/restore); into a pipe or a
file each window is written once it is done, so scripts read the same text the GUI exports.
"""
from __future__ import annotations

import sys

from core.decode.events import DoneEvent, EncodedEvent, Event, TokenEvent
from core.decode.transcript import Transcript

SAVE, RESTORE_AND_CLEAR = "\0337", "\0338\033[J"


class TranscriptPrinter:
    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.live = self.out.isatty()
        self.wrote = False          # any shown text so far: the next window is joined with a space
        self.streamed = ""          # what the live view wrote of the current window

    def _write(self, s: str) -> None:
        self.out.write(s)
        self.out.flush()

    def feed(self, ev: Event, result: Transcript) -> None:
        if isinstance(ev, EncodedEvent) and self.live:
            self._write(SAVE + (" " if self.wrote else ""))
            self.streamed = ""
        elif isinstance(ev, TokenEvent) and self.live:
            if ev.step == 0 and ev.temperature > 0:       # a temperature fallback: the window starts over
                self._write(RESTORE_AND_CLEAR + SAVE + (" " if self.wrote else ""))
                self.streamed = ""
            if ev.text:
                self._write(ev.text)
                self.streamed += ev.text
        elif isinstance(ev, DoneEvent):
            shown = result.windows[-1] in result.shown_windows
            text = result.windows[-1].text.strip()
            if self.live and not shown:
                self._write(RESTORE_AND_CLEAR)
            elif self.live and self.streamed.strip() != text:
                # long audio drops a window's unfinished last segment (the next window decodes it again)
                self._write(RESTORE_AND_CLEAR + (" " if self.wrote and text else "") + text)
            elif not self.live and shown and text:
                self._write((" " if self.wrote else "") + text)
            self.wrote = self.wrote or (shown and bool(text))

    def unfinished(self, result: Transcript) -> None:
        """A decode that failed part-way: into a pipe, the tokens of the window it broke in (a terminal
        already shows them)."""
        w = result.windows[-1] if result.windows else None
        text = result.window_text(w).strip() if w is not None and not w.reason else ""
        if not self.live and text:
            self._write((" " if self.wrote else "") + text)
            self.wrote = True

    def end(self) -> None:
        self._write("\n")
