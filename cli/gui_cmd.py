"""`whisperkv gui`: open the desktop app, optionally scripted (open, transcribe, screenshot, quit)."""
from __future__ import annotations

from app.launch import add_arguments, run_gui, script_of


def register(subs) -> None:
    p = subs.add_parser("gui", help="open the desktop app (WhisperKV Studio)",
                        description="Open WhisperKV Studio. With --open/--transcribe/--screenshot/--quit it runs "
                                    "unattended, e.g. to make the README screenshot; it renders offscreen when "
                                    "there is no display.")
    add_arguments(p)
    p.set_defaults(run=run)


def run(args) -> int:
    return run_gui(script_of(args))
