"""The spec's native form (device/spec/native_form.py): the committed JSON and C header say what the Python spec says,
a C compiler reads the header to the same values, and the check fails when the two disagree."""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from device import protocol as P
from device.spec import native_form, native_tables, protocol_codes, slot_contract
from device.spec.settings import SETTINGS
from device.toolchain import compile as compile_mod
from device.toolchain.compile import CompiledGraph, CompileResult, record


def test_the_committed_form_is_what_the_spec_writes_now():
    behind = native_form.stale(native_form.outputs())
    assert not behind, (f"{', '.join(p.name for p in behind)} differ from the Python spec (device/spec/); "
                        f"run `{native_form.FIX}` and commit the files it writes")
    assert native_form.main(["--check"]) == 0


def test_a_changed_constant_makes_the_check_fail(monkeypatch, capsys):
    monkeypatch.setattr(protocol_codes, "MAX_PAYLOAD", protocol_codes.MAX_PAYLOAD + 1)
    assert native_form.stale(native_form.outputs()) == [native_form.JSON_FILE, native_form.HEADER_FILE]
    assert native_form.main(["--check"]) == 1
    assert "whisperkv_spec.h is stale" in capsys.readouterr().err


def test_a_dropped_runner_flag_makes_the_check_fail(monkeypatch):
    monkeypatch.setattr(native_form, "SETTINGS", [s for s in SETTINGS if s.name != "neuron_api"])
    assert native_form.stale(native_form.outputs()) == [native_form.JSON_FILE, native_form.HEADER_FILE]


def test_the_json_holds_the_protocol_the_flags_the_dla_row_and_the_contract():
    doc = json.loads(native_form.JSON_FILE.read_text())
    assert doc["protocol"]["PROTOCOL"] == P.PROTOCOL and doc["protocol"]["ERROR_CODES"] == list(P.ERROR_CODES)
    assert list(doc["runner_flags"]) == [s.name for s in SETTINGS if s.runner]
    assert doc["runner_flags"]["neuron_api"] == {"flag": "--neuron-api", "kind": "choice", "choices": ["v1", "v2"],
                                                 "default": None}
    assert doc["backends"]["dla"]["graphs"] == ["dla"]
    assert doc["slot_contract"]["CONTRACT"] == slot_contract.CONTRACT


def test_one_macro_name_for_two_values_is_refused(monkeypatch):
    monkeypatch.setattr(slot_contract, "BAD_MEL", "not the protocol's", raising=False)
    with pytest.raises(ValueError, match="WKV_BAD_MEL twice"):
        native_form.outputs()


C_PROGRAM = r"""
#include <stdio.h>
#include "whisperkv_spec.h"
int main(void) {
    static const char *codes[] = WKV_ERROR_CODES;
    static const char *api[] = WKV_FLAG_NEURON_API_CHOICES;
    static const char *graphs[] = WKV_BACKEND_DLA_GRAPHS;
    printf("%d %d %s %s %d %d %s %s %s %d\n", WKV_PROTOCOL, WKV_MAX_PAYLOAD, WKV_BAD_REQUEST,
           codes[WKV_ERROR_CODES_COUNT - 1], WKV_CONTRACT, WKV_FLAG_NEURON_API_CHOICES_COUNT, api[1], graphs[0],
           WKV_FLAG_WORKLOAD_DEFAULT, WKV_LENGTH_BYTES);
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler `cc` on PATH to build a program with the header")
def test_a_c_program_reads_the_header_to_the_python_values(tmp_path):
    source = tmp_path / "spec_values.c"
    source.write_text(C_PROGRAM)
    exe = tmp_path / "spec_values"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", str(native_form.HERE), str(source), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    printed = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert printed == [str(P.PROTOCOL), str(P.MAX_PAYLOAD), P.BAD_REQUEST, P.ERROR_CODES[-1],
                       str(slot_contract.CONTRACT), "2", "v2", "dla", "lean", str(protocol_codes.LENGTH_BYTES)]


def test_the_contract_names_the_fields_compile_records(tmp_path, monkeypatch):
    slot = {"name": "x", "shape": [1, 4], "dtype": "INT8", "bytes": 4, "scale": 0.5, "zero_point": 3}
    monkeypatch.setattr(compile_mod, "graph_slots", lambda tflite: {kind: [slot] for kind in slot_contract.SLOT_KINDS})
    (tmp_path / "model.json").write_text(json.dumps({"files": {}}))
    result = CompileResult(tmp_path, "ncc-tflite", "0.0", "mt8371", ["--opt-footprint"],
                           [CompiledGraph("decoder_step_attention.tflite", "decoder_step_attention.dla", "ab", 1, 0.1)])
    section = record(tmp_path, result)[slot_contract.CONTRACT_SECTION]
    assert tuple(section) == slot_contract.CONTRACT_FIELDS and section["contract"] == slot_contract.CONTRACT
    graph = section["graphs"]["decoder_step_attention"]
    assert set(graph) == set(slot_contract.GRAPH_FIELDS)
    assert all(set(s) == set(slot_contract.SLOT_FIELDS) for kind in slot_contract.SLOT_KINDS for s in graph[kind])


def test_the_spec_modules_a_native_runner_mirrors_import_only_the_standard_library():
    for module in (protocol_codes, slot_contract, native_tables):
        tree = ast.parse(Path(module.__file__).read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert {name.split(".")[0] for name in imported} <= sys.stdlib_module_names, (module.__name__, imported)
