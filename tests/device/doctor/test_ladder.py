"""The ladder (device/doctor/ladder.py): a rung that raises what nobody expected is one line, and stops it."""
from __future__ import annotations

from device.doctor.ladder import BUG_FIX, Checkup, Rung, climb


def raises_argument_error(checkup) -> None:
    import ctypes

    get = ctypes.CDLL(None).strlen
    get.argtypes = [ctypes.c_char_p]
    get(ctypes.byref(ctypes.c_int(0)))      # ctypes.ArgumentError, as a version read once raised at loads


def passes(checkup):
    from device.doctor.ladder import Verdict

    return Verdict(decided_by="fine")


def test_an_unexpected_exception_in_a_rung_is_one_line_with_a_fix_and_stops_the_ladder():
    me = __name__
    rungs = (Rung("first", "a pass", f"{me}:passes", "x"), Rung("broken", "a bug", f"{me}:raises_argument_error", "x"),
             Rung("after", "never reached", f"{me}:passes", "x"))
    first, broken, after = climb(Checkup(target=None), rungs=rungs)
    assert (first.status, broken.status, after.status) == ("pass", "fail", "not-run")
    assert broken.decided_by.startswith("the broken rung failed unexpectedly (ArgumentError: argument 1")
    assert "\n" not in broken.decided_by and broken.fix == BUG_FIX
