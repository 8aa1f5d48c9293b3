"""Which encoder window a decode asks for (issue 55): Whisper's 30 s, a length named, or `auto`, the smallest window
that holds the audio plus a margin, never under a floor.

The margin and the floor are one row each of `WINDOW_PARAMS`, so a front end exposes them from the table. Their
defaults are the public sources' starting point: a 10 s floor and a 2 s margin kept the words of a 26-clip corpus
(handy-computer/transcribe.cpp PR #149), where a window cut to exactly the audio made stock weights loop (FUTO's
whisper-acft `README.md`). docs/benchmarks.md, "Encoder windows", has what they give here.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from core.decode.options import OptionsError
from core.errors import WhisperKVError
from core.model.dims import FULL_WINDOW_S, ModelDims
from core.model.mel import FRAMES_PER_SECOND, N_FRAMES

AUTO = "auto"


@dataclass(frozen=True)
class WindowParam:
    """A parameter of `auto`'s rule: its name (a keyword of `window_for`), the CLI's flag, its default and help."""
    name: str
    flag: str
    default: float
    help: str


WINDOW_PARAMS = (
    WindowParam("window_floor_s", "--window-floor", 10.0, "a sized encoder window (--window auto, a stream's "
                                                          "passes) is never shorter than this"),
    WindowParam("window_margin_s", "--window-margin", 2.0, "a sized encoder window holds at least this much "
                                                            "beyond the audio's end"),
)
DEFAULTS = {p.name: p.default for p in WINDOW_PARAMS}


def sized_window(n_frames: int, windows: tuple[int, ...], window_floor_s: float = DEFAULTS["window_floor_s"],
                 window_margin_s: float = DEFAULTS["window_margin_s"]) -> int:
    """The smallest of `windows` that holds `n_frames` of audio plus the margin and is not under the floor; 30 s
    when none does."""
    need = max(window_floor_s, n_frames / FRAMES_PER_SECOND + window_margin_s)
    return next((w for w in sorted(windows) if w >= need), FULL_WINDOW_S)


# A second or so of speech alone in the 10 s window is misheard where 20 s hears it (en_asterisk_hello-world, 1.4 s:
# "Hama World" on native-int8b, "HELLO WORLD" on onnx; docs/benchmarks.md, "Encoder windows").
SHORT_PASS_S, SHORT_PASS_WINDOW_S = 2.0, 20


def pass_window(n_frames: int, windows: tuple[int, ...], language_known: bool,
                window_floor_s: float = DEFAULTS["window_floor_s"],
                window_margin_s: float = DEFAULTS["window_margin_s"]) -> int:
    """A live stream's pass over `n_frames` of buffer: `sized_window`, but Whisper's whole window until the language
    is known (it tells languages apart over 30 s: a 1 s buffer in the 10 s window heard an English "And" as Italian,
    and the stream kept it), and at least 20 s for a buffer under 2 s."""
    if not language_known:
        return FULL_WINDOW_S
    if n_frames < SHORT_PASS_S * FRAMES_PER_SECOND:
        window_floor_s = max(window_floor_s, SHORT_PASS_WINDOW_S)
    return sized_window(n_frames, windows, window_floor_s, window_margin_s)


def sized_windows(windows: tuple[int, ...], window_floor_s: float = DEFAULTS["window_floor_s"]) -> tuple[int, ...]:
    """Every window `sized_window` may return for `windows` and this floor: those not under it, and 30 s."""
    return tuple(w for w in windows if w >= window_floor_s or w == FULL_WINDOW_S)


def window_for(asked: str, n_frames: int, windows: tuple[int, ...],
               window_floor_s: float = DEFAULTS["window_floor_s"],
               window_margin_s: float = DEFAULTS["window_margin_s"]) -> int:
    """The window_s to send for audio of `n_frames` to a runner serving `windows` (hello's; (30,) from one without
    the list), as asked: "auto", or a length in seconds. OptionsError names what does not fit."""
    for p, value in (("window_floor_s", window_floor_s), ("window_margin_s", window_margin_s)):
        if value < 0:
            raise OptionsError(f"{next(r.flag for r in WINDOW_PARAMS if r.name == p)} must be at least 0 s")
    if asked == AUTO:
        # Audio over one window is decoded 30 s at a time (the seek loop's windows).
        fits = n_frames <= N_FRAMES
        return sized_window(n_frames, windows, window_floor_s, window_margin_s) if fits else FULL_WINDOW_S
    try:
        window_s = int(asked)
    except ValueError:
        raise OptionsError(f"window {asked!r} is not auto nor a length in seconds") from None
    if window_s not in windows:
        raise OptionsError(f"the runner serves {', '.join(map(str, windows))} s windows, not {window_s} s "
                           "(a runner without hello's windows serves 30 s only)")
    if window_s != FULL_WINDOW_S and n_frames > ModelDims().window_frames(window_s):   # 30 s: the seek loop's
        raise OptionsError(f"the audio is {n_frames / FRAMES_PER_SECOND:.1f} s, longer than a {window_s} s window")
    return window_s


class WindowMisfit(WhisperKVError):
    """The encoder window asked for cannot hold the audio, or the runner serves no such window."""

    code = "bad_request"


@dataclass(frozen=True)
class WindowRule:
    """The window a front end asks for (`transcribe --window`, `qa --window`): "auto" or a length in seconds, and
    auto's floor and margin (the rows of WINDOW_PARAMS)."""
    asked: str = str(FULL_WINDOW_S)
    window_floor_s: float = DEFAULTS["window_floor_s"]
    window_margin_s: float = DEFAULTS["window_margin_s"]

    def window_for(self, n_frames: int, windows: tuple[int, ...] | None) -> int:
        """The window_s for audio of `n_frames` on a runner serving `windows` (hello's; None: 30 s only);
        WindowMisfit when the length asked cannot hold the audio or the runner lacks it."""
        try:
            return window_for(self.asked, n_frames, windows or (FULL_WINDOW_S,), self.window_floor_s,
                              self.window_margin_s)
        except OptionsError as exc:
            raise WindowMisfit(str(exc), f"use the window {AUTO}, or one the audio fits") from None

    def to_dict(self) -> dict:
        """A report's record of the rule: the length asked, and auto's floor and margin where auto was."""
        return {"window": self.asked, **({k: v for k, v in asdict(self).items() if k != "asked"}
                                         if self.asked == AUTO else {})}
