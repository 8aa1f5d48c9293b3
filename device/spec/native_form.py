"""The spec in a form a runner in another language reads: a JSON document and a C header, both written from the
Python spec, so the native runner and the Python one cannot drift apart unnoticed (tests/device/spec/
test_native_form.py fails when the committed files differ from what this writes now).

    python -m device.spec.native_form            rewrites device/spec/runner_spec.json and whisperkv_spec.h
    python -m device.spec.native_form --check    exits 1 naming each stale file

What goes in is one table, SECTIONS: each section's name in the JSON, its macros' prefix in the header, and how it
is read from the spec. In the header a string is a C string literal, a number a number, a flag 0 or 1, and a list a
brace initializer (`static const char *ops[] = WKV_REQUEST_OPS;`) with its `_COUNT`; an unset value is left out.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from core.decode import options
from core.model.dims import FULL_WINDOW_S, WINDOWS_S
from device.spec import native_tables, neuron_fixes, neuron_paths, protocol_codes, runner_kind, slot_contract, soc
from device.spec.backend_rows import ROWS
from device.spec.settings import SETTINGS

HERE = Path(__file__).resolve().parent
JSON_FILE = HERE / "runner_spec.json"
HEADER_FILE = HERE / "whisperkv_spec.h"
FIX = "python -m device.spec.native_form"
# The backends a native runner serves: the others run Python libraries (NumPy, ONNX Runtime, LiteRT).
NATIVE_BACKENDS = ("dla",)


def constants(module) -> dict:
    """A spec module's upper-case names and their values, in the module's order."""
    return {name: list(value) if isinstance(value, tuple) else value
            for name, value in vars(module).items() if name.isupper() and not name.startswith("_")}


def runner_flags() -> dict:
    """Every setting the runner takes as a flag: its flag, kind, choices and default."""
    return {s.name: {"flag": s.flag, "kind": s.kind, "choices": list(s.choices), "default": s.default}
            for s in SETTINGS if s.runner}


def backends() -> dict:
    """The backend rows a native runner serves: the graph formats each runs, where, and whether it reports the
    alignment heads' cross-attention."""
    return {name: {"name": name, "graphs": list(ROWS[name].graphs), "deploy": ROWS[name].deploy,
                   "arches": list(ROWS[name].arches), "attention": ROWS[name].attention}
            for name in NATIVE_BACKENDS}


def neuron() -> dict:
    """The Neuron runtime's search order, sonames and API symbols (neuron_paths.py), and the dla backend's fix
    lines, so that a native runner words each refusal as the Python one does."""
    paths = {name: value for name, value in constants(neuron_paths).items() if name != "APIS"}   # = V1/V2_NEEDS
    fixes = constants(neuron_fixes)
    return {**paths, "EXPORT_FIX": fixes["EXPORT_FIX"], "BUNDLE_FIX": fixes["NO_DLA_FIX"],
            **{name: fixes[name] for name in ("SLOT_FIX", "CREATE_FIX", "DLA_FIX", "RUN_FIX", "V2_CONVERTS")}}


def soc_table() -> dict:
    """The SoC table as parallel lists (a SoC's flags in one space-separated text), and where a board names its SoC
    (soc.py board_soc)."""
    return {"NAMES": list(soc.SOCS), "NPUS": [row["npu"] for row in soc.SOCS.values()],
            "FLAGS": [" ".join(row["flags"]) for row in soc.SOCS.values()],
            "FAMILY": [int(row.get("family", False)) for row in soc.SOCS.values()], "UNKNOWN": soc.UNKNOWN,
            "COMPATIBLE": list(soc.COMPATIBLE), "SOC0": list(soc.SOC0), "GETPROP": list(soc.GETPROP),
            "ROOT_VARIABLE": soc.ROOT_VARIABLE}


def decode_options() -> dict:
    """What a request may ask where it says nothing, and its bounds (core/decode/options.py): the encoder windows
    among them (core/model/dims.py), and Whisper's own 30 s."""
    return {"TASKS": list(options.TASKS), "MAX_TOKENS": options.MAX_TOKENS, "TOP_K": options.DecodeOptions.top_k,
            "MAX_TOP_K": options.MAX_TOP_K, "WINDOWS_S": list(WINDOWS_S), "FULL_WINDOW_S": FULL_WINDOW_S}


# (the JSON's section, the header's macro prefix, its values)
SECTIONS = (
    ("protocol", "WKV", lambda: constants(protocol_codes)),
    ("slot_contract", "WKV", lambda: constants(slot_contract)),
    ("runner_flags", "WKV_FLAG", runner_flags),
    ("backends", "WKV_BACKEND", backends),
    ("native_tables", "WKV_TABLES", lambda: constants(native_tables)),
    ("neuron", "WKV_NEURON", neuron),
    ("runner_kind", "WKV_KIND", lambda: constants(runner_kind)),
    ("soc", "WKV_SOC", soc_table),
    ("decode_options", "WKV_DECODE", decode_options),
)


def form() -> dict:
    """The whole spec as one JSON-able document."""
    return {"generated_by": FIX, **{section: values() for section, _, values in SECTIONS}}


def json_text(doc: dict) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def c_value(value) -> str | None:
    """`value` as a C literal or initializer; None when it has none (unset, or an empty list)."""
    if value is None or value == []:
        return None
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, (list, tuple)):
        return "{" + ", ".join(c_value(v) for v in value) + "}"
    raise TypeError(f"the native form has no C form for {value!r}")


def c_defines(prefix: str, values: dict) -> list[tuple[str, str]]:
    """(macro, value) for each value, a nested dict's keys joined to the prefix: {"model": {"kind": ...}} under
    WKV_FLAG gives WKV_FLAG_MODEL_KIND."""
    out = []
    for key, value in values.items():
        name = f"{prefix}_{key.upper().replace('-', '_')}"
        if isinstance(value, dict):
            out += c_defines(name, value)
            continue
        if isinstance(value, list):
            out.append((f"{name}_COUNT", str(len(value))))
        if (literal := c_value(value)) is not None:
            out.append((name, literal))
    return out


def header_text(doc: dict) -> str:
    """The C header of `doc`; two values under one macro name are refused, as C would only warn."""
    lines = ["/* Generated by `" + doc["generated_by"] + "` from device/spec/ (protocol_codes.py, slot_contract.py,",
             "   settings.py, backend_rows.py, native_tables.py, neuron_paths.py, runner_kind.py, soc.py), core/decode/options.py",
             "   and the dla backend's fix lines (device/runner/neuron/); do not edit: change the spec and run it again. */",
             "#ifndef WHISPERKV_SPEC_H", "#define WHISPERKV_SPEC_H"]
    seen: set[str] = set()
    for section, prefix, _ in SECTIONS:
        lines += ["", f"/* {section} */"]
        for name, literal in c_defines(prefix, doc[section]):
            if name in seen:
                raise ValueError(f"the native form names {name} twice; rename one in the spec")
            seen.add(name)
            lines.append(f"#define {name} {literal}")
    return "\n".join(lines + ["", "#endif"]) + "\n"


def outputs() -> dict[Path, str]:
    """Each file of the form and the text it should hold now."""
    doc = form()
    return {JSON_FILE: json_text(doc), HEADER_FILE: header_text(doc)}


def stale(wanted: dict[Path, str]) -> list[Path]:
    """The files whose text differs from what the spec writes now (or that are missing)."""
    return [path for path, text in wanted.items() if not path.is_file() or path.read_text() != text]


def main(argv: list[str]) -> int:
    wanted = outputs()
    if "--check" in argv:
        behind = stale(wanted)
        for path in behind:
            print(f"{path.name} is stale: the Python spec says otherwise; run `{FIX}`", file=sys.stderr)
        return 1 if behind else 0
    for path, text in wanted.items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
