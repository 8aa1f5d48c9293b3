"""Start the app: `python -m app` and `whisperkv gui` both come here."""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import TYPE_CHECKING

from app.errors import failure_of

if TYPE_CHECKING:   # `whisperkv --help` and every other subcommand build this parser: no Qt for them
    from app.automation import Script


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--open", metavar="AUDIO", help="load this audio file at start")
    parser.add_argument("--transcribe", action="store_true", help="transcribe the opened audio at once")
    parser.add_argument("--screenshot", metavar="PNG", help="save the window as a PNG once everything is done")
    parser.add_argument("--quit", action="store_true", help="quit once everything is done (exit 1 on an error)")


def script_of(args: argparse.Namespace) -> Script:
    from app.automation import Script  # imports Qt: `whisperkv --help` builds this module's parser

    return Script(open=args.open, transcribe=args.transcribe, screenshot=args.screenshot, quit=args.quit)


def run_gui(script: Script) -> int:
    headless = sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and script.quit:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a scripted run needs no screen
    elif headless:
        print("whisperkv gui: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset) — run it "
              "in a desktop session, or script it: --open AUDIO --transcribe --screenshot out.png --quit",
              file=sys.stderr)
        return 2
    # Qt (~0.3 s) only when the window opens: every `whisperkv` subcommand imports this module for its parser
    from PySide6.QtWidgets import QApplication

    from app.automation import Automation
    from app.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("WhisperKV Studio")
    window = MainWindow(ask_on_close=not script.quit)
    install_excepthook(window)
    window.show()
    automation = Automation(window, script)
    automation.start()
    code = app.exec()
    return automation.exit_code if script.quit else code


def install_excepthook(window) -> None:
    """A bug in a slot becomes the same problem-and-fix dialog as any other error; the traceback goes to
    stderr for the bug report, never into the window."""

    def hook(kind, value, tb):
        traceback.print_exception(kind, value, tb, file=sys.stderr)
        if isinstance(value, Exception):
            window.show_failure(failure_of(value))

    sys.excepthook = hook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app", description="WhisperKV Studio desktop app")
    add_arguments(parser)
    return run_gui(script_of(parser.parse_args(argv)))
