"""The encoder window's flags, as `transcribe` and `qa` take them: `--window auto|10|20|30` and auto's rule, one flag
per row of core/decode/window_choice.py's WINDOW_PARAMS."""
from __future__ import annotations

from core.decode.window_choice import WINDOW_PARAMS, WindowRule
from core.model.dims import FULL_WINDOW_S, WINDOWS_S


def add_window_args(p, audio: str = "the audio") -> None:
    p.add_argument("--window", default=str(FULL_WINDOW_S), metavar="auto|" + "|".join(map(str, WINDOWS_S)),
                   help=f"the encoder window: {FULL_WINDOW_S} s, Whisper's own (default); a shorter length, which "
                   f"{audio} must fit; or auto, the smallest that holds {audio} plus --window-margin, never under "
                   "--window-floor (a runner without shorter windows encodes 30 s)")
    for param in WINDOW_PARAMS:
        p.add_argument(param.flag, dest=param.name, type=float, default=param.default, metavar="S",
                       help=f"{param.help} (default {param.default:g})")


def window_rule(args) -> WindowRule:
    return WindowRule(args.window, **{p.name: getattr(args, p.name) for p in WINDOW_PARAMS})
