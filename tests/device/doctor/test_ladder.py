"""The ladder (device/doctor/ladder.py): a rung that raises what nobody expected is one line, and stops it; every
row names its rung's function by reference, from the leaf checkup module."""
from __future__ import annotations

import ctypes
import inspect

from device.doctor import checkup
from device.doctor.checkup import Checkup, Verdict
from device.doctor.ladder import BUG_FIX, RUNGS, Rung, climb
from tests.import_graph import import_arrows


def raises_argument_error(checkup) -> None:
    get = ctypes.CDLL(None).strlen
    get.argtypes = [ctypes.c_char_p]
    get(ctypes.byref(ctypes.c_int(0)))      # ctypes.ArgumentError, as a version read once raised at loads


def passes(checkup):
    return Verdict(decided_by="fine")


def test_an_unexpected_exception_in_a_rung_is_one_line_with_a_fix_and_stops_the_ladder():
    rungs = (Rung("first", "a pass", passes, "x"), Rung("broken", "a bug", raises_argument_error, "x"),
             Rung("after", "never reached", passes, "x"))
    first, broken, after = climb(Checkup(target=None), rungs=rungs)
    assert (first.status, broken.status, after.status) == ("pass", "fail", "not-run")
    assert broken.decided_by.startswith("the broken rung failed unexpectedly (ArgumentError: argument 1")
    assert "\n" not in broken.decided_by and broken.fix == BUG_FIX


def test_every_row_names_a_function_of_a_rung_module_that_imports_the_leaf_not_the_ladder():
    graph = import_arrows()
    assert not {m for m in graph["device.doctor.checkup"] if m.startswith("device.doctor")}
    for rung in RUNGS:
        assert inspect.isfunction(rung.check), rung.name
        module = rung.check.__module__
        assert module in graph["device.doctor.ladder"] and "device.doctor.checkup" in graph[module], rung.name
        assert "device.doctor.ladder" not in graph[module], rung.name
    assert checkup.Rung is Rung
