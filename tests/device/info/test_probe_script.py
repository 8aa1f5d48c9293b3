"""The modules the board probes send as text (device/info/probe_script.py joins them for the board's own Python) import
only the standard library, every import at column 0 on the module's top level, and each other only by a one-line
`from device.` import that the joiner drops. The modules are found from the probes' own `probe_script(...)` calls."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from device.doctor import board_probe
from device.info import info

CALLERS = (info, board_probe)


def sent_modules(caller) -> list[tuple]:
    """Each `probe_script((m1, m2, ...), body)` call in `caller`'s source: the module objects it sends."""
    calls = [node for node in ast.walk(ast.parse(Path(caller.__file__).read_text()))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "probe_script"]
    return [tuple(getattr(caller, elt.id) for elt in call.args[0].elts) for call in calls]


def import_problems(text: str, sent_names: set[str]) -> list[str]:
    """What in a module's text would break it as part of a probe script, one line each (empty: nothing)."""
    tree = ast.parse(text)
    top = {id(node) for node in tree.body}
    problems = []
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    for node in sorted(imports, key=lambda node: node.lineno):
        where = f"line {node.lineno}"
        if id(node) not in top or node.col_offset:
            problems.append(f"{where}: an import not at column 0 of the module's top level")
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            if name == "__future__" or name.split(".")[0] in sys.stdlib_module_names:
                continue
            if isinstance(node, ast.ImportFrom) and name.startswith("device."):
                if node.end_lineno != node.lineno:
                    problems.append(f"{where}: `from {name}` spans lines; the joiner drops only its first")
                if name.rsplit(".", 1)[-1] not in sent_names:
                    problems.append(f"{where}: {name} is not sent with this module, so its names are missing")
                continue
            problems.append(f"{where}: {name} is not in the standard library")
    return problems


PROBES = [(caller.__name__, modules) for caller in CALLERS for modules in sent_modules(caller)]


def test_every_probe_caller_is_found():
    assert [name for name, _ in PROBES] == ["device.info.info", "device.doctor.board_probe"]
    assert all(modules for _, modules in PROBES)


@pytest.mark.parametrize("caller, modules", PROBES, ids=[name for name, _ in PROBES])
def test_the_sent_modules_import_only_the_standard_library_at_column_0(caller, modules):
    sent = {m.__name__.rsplit(".", 1)[-1] for m in modules}
    for module in modules:
        assert import_problems(Path(module.__file__).read_text(), sent) == [], module.__name__


SYNTHETIC = """\
import os
import numpy
from device.spec.board_files import read_text
from device.spec.elsewhere import (
    thing)
try:
    import json
except ImportError:
    json = None


def f():
    import re
    return re
"""


def test_the_check_names_each_kind_of_import_a_probe_cannot_carry():
    assert import_problems(SYNTHETIC, {"board_files"}) == [
        "line 2: numpy is not in the standard library",
        "line 4: `from device.spec.elsewhere` spans lines; the joiner drops only its first",
        "line 4: device.spec.elsewhere is not sent with this module, so its names are missing",
        "line 7: an import not at column 0 of the module's top level",
        "line 13: an import not at column 0 of the module's top level",
    ]
