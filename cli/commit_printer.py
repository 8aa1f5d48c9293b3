"""`whisperkv stream` on stdout: committed text as it is confirmed; on a terminal the tentative tail follows
it in grey and is redrawn at every pass (cursor save/restore, as cli/transcript_printer.py does). Into a pipe or a
file only committed text is written, each piece flushed as it comes."""
from __future__ import annotations

import sys

from cli.transcript_printer import RESTORE_AND_CLEAR, SAVE
from core.stream.events import Committed, StreamEvent, Tentative

GREY, PLAIN = "\033[90m", "\033[0m"


class CommitPrinter:
    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.live = self.out.isatty()
        self.started = False        # any committed text yet: the first piece loses its leading space
        self.tail = False           # a grey tail is on screen after the saved cursor

    def _write(self, s: str) -> None:
        self.out.write(s)
        self.out.flush()

    def feed(self, ev: StreamEvent) -> None:
        if isinstance(ev, Committed) and ev.text.strip():
            text = ev.text if self.started else ev.text.lstrip()
            self._write((RESTORE_AND_CLEAR if self.tail else "") + text)
            self.started, self.tail = True, False
        elif isinstance(ev, Tentative) and self.live:
            tail = ev.text if self.started else ev.text.lstrip()
            self._write((RESTORE_AND_CLEAR if self.tail else SAVE) + (GREY + tail + PLAIN if tail else ""))
            self.tail = True

    def end(self) -> None:
        self._write((RESTORE_AND_CLEAR if self.tail else "") + "\n")
