"""MediaTek's Neuron runtime through ctypes: the library found, the API chosen, one graph per compiled `.dla`.

Which library: `?neuron_lib=PATH` (the runner's `--neuron-lib`) when given, else the first that exists of
device/spec/neuron_paths.py's search order (the Genio IoT Yocto names, the Android names, a distribution's library
folders), else the first soname the loader finds. A miss names every place tried.

Which API: MediaTek documents two C APIs, Runtime V1 (RuntimeAPI.h) and V2 (RuntimeV2.h). **V1 where the library
exports it**: it is the API proven on this family (a public Whisper runner on a Genio 720's IoT Yocto image,
hhlqwq/mtk_models whisper_tiny/deploy/board/whisper_board_eval.cpp, and the MT8371 Android ports); V2 otherwise.
`?neuron_api=v1|v2` (`--neuron-api`) forces one, and `?neuron_qos=off` (`--neuron-qos off`) leaves the QoS the
public ports set unset. How the slots are fed: `?neuron_io=native` (default: conversion suppressed, that runner's
recipe; device/runner/neuron/neuron_slots.py) or `converted`; V2 has no public way to suppress conversion, so a V2 library
is fed converted and says why. How a runtime is created: plain `create` (default, as that runner) or
`?neuron_create=options`. Each API's calls live in its own file (neuron_v1.py, neuron_v2.py, sharing
neuron_graph.py) behind the small interface the dla backend uses: `NeuronLibrary.open_graph(dla, threads)` gives an
object with `input_sizes`, `output_sizes`, `padded_sizes(kind)`, `run(inputs, outputs)` and `release()`. Every int
the runtime returns is a RuntimeAPI error code, 0 on success.

A `.dla` loads only on a runtime of its compiler's major version (MediaTek's Neuron runtime guide);
`version_warning` compares what `whisperkv compile` recorded with the library's own version.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

from core.errors import Fix, Setting
from device.runner.neuron.neuron_graph import NeuronError
from device.runner.neuron.neuron_v1 import V1Graph
from device.runner.neuron.neuron_v2 import V2Graph
from device.spec.neuron_fixes import V2_CONVERTS
from device.spec.neuron_paths import APIS, LIB_FIX, SEARCH_ORDER, apis_of, by_soname, first_present, tried, version_of

KNOWN_PATHS = SEARCH_ORDER
API_CHOICES = ("v1", "v2")
# LIB_FIX stays text in the spec (its module reaches a board's Python as text, without core); the runner's errors
# keep its ?neuron_lib=PATH as a Setting.
NEURON_LIB = Setting("neuron_lib", "PATH")
_before, _named, _after = LIB_FIX.partition(str(NEURON_LIB))
assert _named, f"LIB_FIX names {NEURON_LIB}"
LIB = Fix(_before, NEURON_LIB, _after)
IO_CHOICES = ("native", "converted")      # ?neuron_io=: conversion suppressed (the proven recipe) or on
CREATE_CHOICES = ("plain", "options")     # ?neuron_create=: NeuronRuntime_create, or create_with_options

def open_library(path: str | None = None) -> tuple[str, ctypes.CDLL]:
    """(where it was found, the loaded library): `path` when given, else the first of the search order that
    exists, else the first soname the loader finds. A miss names every place tried."""
    if path:
        if not os.path.isfile(path):
            raise NeuronError(f"the Neuron runtime library {path} does not exist", LIB)
    else:
        path = first_present()
        if path is None:
            found = by_soname()
            if found is None:
                raise NeuronError("no Neuron runtime library here (tried " + ", ".join(tried()) + ")", LIB)
            return found
    try:
        return path, ctypes.CDLL(path)
    except OSError as exc:
        raise NeuronError(f"cannot load the Neuron runtime library {path} ({exc})", LIB) from None


def installed() -> bool:
    """A runtime library at one of the known paths or by its soname: `auto` picks the dla backend only then
    (never on a PC)."""
    return first_present() is not None or by_soname() is not None


def _choice(value: str | None, choices: tuple[str, ...], setting: str) -> str:
    value = (value or choices[0]).lower()
    if value not in choices:
        raise NeuronError(f"unknown ?{setting}={value}",
                          Fix("use ", Fix.join(" or ", (Setting(setting, choice) for choice in choices))))
    return value


class NeuronLibrary:
    """The loaded library, the API it is driven through ("V1" or "V2"), how its slots are fed (`io`: "native",
    conversion suppressed, or "converted") and how each runtime is created (`create`: "plain" or "options")."""

    def __init__(self, path: str | None = None, api: str | None = None, qos: bool = True, io: str | None = None,
                 create: str | None = None):
        self.qos = qos
        self.path, self.lib = open_library(path)
        self.exported = apis_of(self.lib)
        if not self.exported:
            lacks = [f"{name} lacks {', '.join(missing[:2])}" + (f" and {len(missing) - 2} more" if missing[2:] else "")
                     for name, needs in APIS.items() if (missing := [s for s in needs if not hasattr(self.lib, s)])]
            raise NeuronError(f"{self.path} is not a Neuron runtime library: it exports neither Runtime API ("
                              + "; ".join(lacks) + ")", LIB)
        if api is None:
            self.api = self.exported[0]
        elif api.lower() not in API_CHOICES:
            raise NeuronError(f"unknown Neuron runtime API {api!r}",
                              Fix("use ", Setting("neuron_api", "v1"), " or ", Setting("neuron_api", "v2")))
        elif api.upper() not in self.exported:
            raise NeuronError(f"{self.path} does not export Neuron Runtime {api.upper()} (it has "
                              f"{', '.join(self.exported)})", Fix(Setting("neuron_api", api, "drop"), " or use ",
                                                                   Setting("neuron_api", self.exported[0].lower())))
        else:
            self.api = api.upper()
        self.io, self.create = _choice(io, IO_CHOICES, "neuron_io"), _choice(create, CREATE_CHOICES, "neuron_create")
        self.io_note = ""
        if self.api == "V2" and self.io == "native":
            self.io, self.io_note = "converted", V2_CONVERTS

    @property
    def suppressed(self) -> bool:
        """Conversion suppressed: the slots are fed in the NPU's native form (neuron_slots.py)."""
        return self.io == "native"

    def version(self) -> str | None:
        """The library's version, "major.minor.patch", where it reports one."""
        return version_of(self.lib)

    def has(self, symbol: str) -> bool:
        return hasattr(self.lib, symbol)

    def fn(self, symbol: str, argtypes: list, restype=ctypes.c_int):
        """The exported function, typed."""
        f = getattr(self.lib, symbol)
        f.argtypes, f.restype = argtypes, restype
        return f

    def open_graph(self, dla: Path, threads: int = 1):
        """One compiled graph on this library's API."""
        return (V1Graph if self.api == "V1" else V2Graph)(self, Path(dla), threads)
