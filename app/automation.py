"""Scripted runs for docs and demos: open audio, transcribe, screenshot the finished window, quit."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

SCREENSHOT_SIZE = (1600, 1000)
SETTLE_MS = 300  # let the last refresh and layout land before the screenshot


@dataclass
class Script:
    open: str | None = None
    transcribe: bool = False
    screenshot: str | None = None
    quit: bool = False


class Automation(QObject):
    def __init__(self, window, script: Script):
        super().__init__(window)
        self.window = window
        self.script = script
        self.exit_code = 0
        window.failureShown.connect(self._report)

    def start(self) -> None:
        if self.script.screenshot:
            self.window.resize(*SCREENSHOT_SIZE)  # the same framing every time, whatever geometry was saved
        if self.script.open:
            self.window.clipLoaded.connect(self._on_loaded)
            self.window.open_audio(self.script.open)
        else:
            self._finish()

    def _on_loaded(self, clip) -> None:
        self.window.clipLoaded.disconnect(self._on_loaded)
        if clip is None:
            self.exit_code = 1
            self._finish()
        elif self.script.transcribe:
            self.window.runFinished.connect(self._on_run_finished)
            self.window.transcribe()
        else:
            self._finish()

    def _on_run_finished(self, run) -> None:
        self.window.runFinished.disconnect(self._on_run_finished)
        if run.error is not None:
            self.exit_code = 1
        else:
            print(run.text(), flush=True)
        self._finish()

    def _report(self, failure) -> None:
        print(f"whisperkv gui: {failure.problem} — {failure.fix}", file=sys.stderr, flush=True)

    def _finish(self) -> None:
        QTimer.singleShot(SETTLE_MS, self._settled)

    def _settled(self) -> None:
        if self.script.screenshot:
            if self.window.grab().save(self.script.screenshot, "PNG"):
                print(f"screenshot: {self.script.screenshot}", file=sys.stderr, flush=True)
            else:
                print(f"whisperkv gui: cannot write {self.script.screenshot}", file=sys.stderr, flush=True)
                self.exit_code = 1
        if self.script.quit:
            self.window.close()
            QApplication.instance().exit(self.exit_code)
