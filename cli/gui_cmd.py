"""`whisperkv gui`: open the desktop app, optionally scripted (open, transcribe, screenshot, quit)."""
from __future__ import annotations


def register(subs) -> None:
    from app.launch import add_arguments

    p = subs.add_parser("gui", help="open the desktop app (WhisperKV Studio)",
                        description="Open WhisperKV Studio. With --open/--transcribe/--screenshot/--quit it runs "
                                    "unattended, e.g. to make the README screenshot; it renders offscreen when "
                                    "there is no display.")
    add_arguments(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from app.launch import run_gui, script_of

    return run_gui(script_of(args))
