"""The runner's compute backends, one row each: what each is called, needs, ships and runs on. Help texts, the
runner's description, the studio's combo, deploy's lists and `auto`'s order read these rows; the runner's
`name → factory` map (device/runner/backends.py) gives each row its code, so this table names no backend module
and a runner in another language (the native runner) reads the same rows.
"""
from __future__ import annotations

import importlib.util
import platform
from dataclasses import dataclass

# Which TFLite interpreter the runner takes: the board image's own `tflite_runtime` before `ai_edge_litert`. A stock
# Genio 520 EVK image (IoT Yocto Rity 25.1.1, recorded in bbudaedu/talkybuddy `edge/`) has tflite_runtime 2.16.1 in
# its system Python; ai_edge_litert is the wheel pip installs elsewhere. The tflite row's `needs`, device-info and
# the tflite backend (device/runner/tflite/litert.py) read this one order.
TFLITE_INTERPRETERS = ("tflite_runtime", "ai_edge_litert")


@dataclass(frozen=True)
class BackendRow:
    name: str
    summary: str                 # one line: help texts and the studio's tooltip
    needs: tuple[str, ...] = ()  # Python modules it imports; "a|b" is either (found on the path, never imported)
    needs_fix: str = ""          # what to install when one is missing
    exact: bool = False          # its tokens equal the reference's on every bundled clip, as the CLI feeds them
    deploy: str = "auto"         # the `whisperkv deploy --backend` mode that ships what it reads
    delegates: bool = False      # it loads a delegate library (--delegate)
    arches: tuple[str, ...] = ()  # CPU architectures (uname -m) it runs on; empty: any
    folder: str | None = None    # its own folder, shipped by deploy only to a board of one of `arches`
    graphs: tuple[str, ...] = ("onnx",)   # the bundle graph formats it runs
    attention: bool = True       # it can report the alignment heads' cross-attention (word timings, the heatmap)
    auto: int | None = None      # `auto`'s preference for weights (1 first); None: never picked
    auto_bundle: int | None = None   # the same for an exported bundle

    def lacks(self) -> tuple[str, str] | None:
        """(why, fix) when this machine lacks a module or the CPU it needs; None when it has them."""
        lost = [m for m in self.needs if not any(_installed(alt) for alt in m.split("|"))]
        if lost:
            names = " and ".join(m.replace("|", " or ") for m in lost)
            return f"backend {self.name!r} needs {names}, which {'is' if len(lost) == 1 else 'are'} not installed " \
                   "here", self.needs_fix
        if self.arches and platform.machine() not in self.arches:
            return (f"backend {self.name!r} runs on {', '.join(self.arches)}, not {platform.machine()}",
                    "use --backend " + " or ".join(r.name for r in ROWS.values() if r.exact and not r.arches))
        return None

    def runs_on(self, arch: str) -> bool:
        return not self.arches or arch in self.arches


def _installed(module: str) -> bool:
    """Found on the path, without importing: ai_edge_litert alone takes ~1.2 s to import, and every CLI
    and runner start asks which backends exist. The backend that is chosen imports for real."""
    return importlib.util.find_spec(module) is not None


_ONNX_FIX = "pip install onnx onnxruntime, or use --backend numpy"
_ONNX = ("onnx", "onnxruntime")
ROWS: dict[str, BackendRow] = {row.name: row for row in (
    BackendRow("numpy", "the NumPy reference (core/model/whisper.py), needs nothing but NumPy", exact=True,
               graphs=("onnx", "tflite"), auto=3, auto_bundle=4),
    BackendRow("onnx", "the fp32 graphs under ONNX Runtime, the reference's tokens", _ONNX, _ONNX_FIX, exact=True,
               auto=2, auto_bundle=2),
    BackendRow("native-int8b", "onnx-int8b's weights with the decoder step in C, the reference's tokens "
               "(x86-64 with AVX-512 and a C compiler)", _ONNX, _ONNX_FIX, exact=True, arches=("x86_64", "AMD64"),
               folder="device/runner/native", auto=1),
    BackendRow("onnx-int8b", "block-wise int8 weights (a scale per 16), faster than onnx, may differ", _ONNX,
               _ONNX_FIX),
    BackendRow("onnx-fp16", "fp16 graphs under ONNX Runtime, may differ", _ONNX, _ONNX_FIX),
    BackendRow("onnx-int8", "dynamically quantised int8 graphs, may differ", _ONNX, _ONNX_FIX),
    BackendRow("tflite", "the TFLite graphs in LiteRT, on a board through a delegate (--delegate)",
               ("|".join(TFLITE_INTERPRETERS),), "pip install ai-edge-litert, or use another --backend",
               deploy="tflite", delegates=True, graphs=("tflite",), auto_bundle=3),
    # `auto` only where a runtime library is installed (a board): never on a PC. Asked for by name it loads the
    # library given with --neuron-lib (?neuron_lib=PATH), and says which paths it looked at when there is none.
    BackendRow("dla", "a compiled bundle's .dla graphs on MediaTek's Neuron runtime, the NPU (--neuron-lib)",
               deploy="dla", graphs=("dla",), auto_bundle=1),
)}


def deploy_modes() -> tuple[str, ...]:
    """`whisperkv deploy --backend`: auto ships the whole model; each other mode a row names ships what it reads."""
    return ("auto", *sorted({r.deploy for r in ROWS.values()} - {"auto"}))


def deploy_help() -> str:
    """`whisperkv deploy --backend` help, from the table: what each mode ships."""
    modes = {m: [r.name for r in ROWS.values() if r.deploy == m] for m in deploy_modes()[1:]}
    return "auto (default): the whole model; " + "; ".join(
        f"{m}: only what the {' and '.join(names)} backend reads from an exported bundle"
        for m, names in modes.items()) + " (docs/board.md)"


def backend_help(extra: str = "") -> str:
    """The --backend help every command shows, from the table."""
    first = [r.name for r in sorted((r for r in ROWS.values() if r.auto), key=lambda r: r.auto)]
    return (f"auto (default: the first of {', '.join(first)} that runs here; all give the reference's tokens"
            f"{extra}), or one of: " + "; ".join(f"{r.name}: {r.summary}" for r in ROWS.values()))
