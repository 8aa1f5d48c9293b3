"""The runner's compute backends: one table, from which every list of them is generated.

Each row (BackendSpec) names a backend, says what it needs and how to build it; help texts, the runner's
description, the studio's combo and its tooltip, error messages, deploy's lists and `auto` all read the table.
A backend is one file with a factory plus one row here (docs/architecture.md, "How to add a backend").
Factories are named by their import path and imported only when that backend is built: the chosen backend pays
its imports (onnx, LiteRT), and the table imports none of them.
"""
from __future__ import annotations

import importlib
import importlib.util
import platform
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import WhisperKVError
from device.runner.litert import TFLITE_INTERPRETERS
from device.runner.runtime_config import RuntimeConfig


class BackendError(WhisperKVError):
    code = "model_missing"




@dataclass(frozen=True)
class BackendSpec:
    name: str
    summary: str                 # one line: help texts and the studio's tooltip
    factory: str                 # "module:function"(source, *, config, cross, delegate, save_dir, **options)
    needs: tuple[str, ...] = ()  # Python modules it imports; "a|b" is either (found on the path, never imported)
    needs_fix: str = ""          # what to install when one is missing
    exact: bool = False          # its tokens equal the reference's on every bundled clip, as the CLI feeds them
    cached: str | None = None    # "module:function" opening it from the start-up cache; None: it never uses one
    deploy: str = "auto"         # the `whisperkv deploy --backend` mode that ships what it reads
    delegates: bool = False      # it loads a delegate library (--delegate)
    arches: tuple[str, ...] = ()  # CPU architectures (uname -m) it runs on; empty: any
    folder: str | None = None    # its own folder, shipped by deploy only to a board of one of `arches`
    probe: str | None = None     # "module:function"() -> (reason, fix) when this machine cannot run it, else None
    ready: str | None = None     # "module:function"() -> bool, asked by `auto` only (e.g. compiles once)
    graphs: tuple[str, ...] = ("onnx",)   # the bundle graph formats it runs
    attention: bool = True       # it can report the alignment heads' cross-attention (word timings, the heatmap)
    auto: int | None = None      # `auto`'s preference for weights (1 first); None: never picked
    auto_bundle: int | None = None   # the same for an exported bundle
    options: dict = field(default_factory=dict)   # extra keyword arguments for its factories

    def missing(self) -> tuple[str, str] | None:
        """(why, fix) when this machine cannot run it; None when it can."""
        lost = [m for m in self.needs if not any(_installed(alt) for alt in m.split("|"))]
        if lost:
            names = " and ".join(m.replace("|", " or ") for m in lost)
            return f"backend {self.name!r} needs {names}, which {'is' if len(lost) == 1 else 'are'} not installed " \
                   "here", self.needs_fix
        if self.arches and platform.machine() not in self.arches:
            return (f"backend {self.name!r} runs on {', '.join(self.arches)}, not {platform.machine()}",
                    "use --backend " + " or ".join(s.name for s in REGISTRY.values() if s.exact and not s.arches))
        return _call(self.probe) if self.probe else None

    def build(self, source, **kwargs):
        return _call(self.factory, source, **kwargs, **self.options)

    def open_cached(self, directory: Path, **kwargs):
        """From the start-up cache (device/runner/startup_cache.py) of a backend with `cached`."""
        return _call(self.cached, directory, **kwargs, **self.options)

    def runs_on(self, arch: str) -> bool:
        return not self.arches or arch in self.arches


_ONNX_FIX = "pip install onnx onnxruntime, or use --backend numpy"
_ONNX = ("onnx", "onnxruntime")
_ONNX_FACTORY, _ONNX_CACHED = "device.runner.onnx_build:build", "device.runner.onnx_build:open_cached"
REGISTRY: dict[str, BackendSpec] = {spec.name: spec for spec in (
    BackendSpec("numpy", "the NumPy reference (core/model/whisper.py), needs nothing but NumPy",
                "device.runner.numpy_backend:build", exact=True, graphs=("onnx", "tflite"), auto=3, auto_bundle=4),
    BackendSpec("onnx", "the fp32 graphs under ONNX Runtime, the reference's tokens", _ONNX_FACTORY, _ONNX,
                _ONNX_FIX, exact=True, cached=_ONNX_CACHED, auto=2, auto_bundle=2, options={"dtype": "fp32"}),
    BackendSpec("native-int8b", "onnx-int8b's weights with the decoder step in C, the reference's tokens "
                "(x86-64 with AVX-512 and a C compiler)", "device.runner.native.backend:build", _ONNX, _ONNX_FIX,
                exact=True, cached="device.runner.native.backend:open_cached", arches=("x86_64", "AMD64"),
                folder="device/runner/native",
                probe="device.runner.native.library:unsupported", ready="device.runner.native.library:ready",
                auto=1),
    BackendSpec("onnx-int8b", "block-wise int8 weights (a scale per 16), faster than onnx, may differ",
                _ONNX_FACTORY, _ONNX, _ONNX_FIX, cached=_ONNX_CACHED, options={"dtype": "int8b"}),
    BackendSpec("onnx-fp16", "fp16 graphs under ONNX Runtime, may differ", _ONNX_FACTORY, _ONNX, _ONNX_FIX,
                cached=_ONNX_CACHED, options={"dtype": "fp16"}),
    BackendSpec("onnx-int8", "dynamically quantised int8 graphs, may differ", _ONNX_FACTORY, _ONNX, _ONNX_FIX,
                cached=_ONNX_CACHED, options={"dtype": "int8"}),
    BackendSpec("tflite", "the TFLite graphs in LiteRT, on a board through a delegate (--delegate)",
                "device.runner.tflite_backend:build", ("|".join(TFLITE_INTERPRETERS),),
                "pip install ai-edge-litert, or use another --backend", deploy="tflite", delegates=True,
                graphs=("tflite",), auto_bundle=3),
    # `auto` only where a runtime library is installed (a board): never on a PC. Asked for by name it loads the
    # library given with --neuron-lib (?neuron_lib=PATH), and says which paths it looked at when there is none.
    BackendSpec("dla", "a compiled bundle's .dla graphs on MediaTek's Neuron runtime, the NPU (--neuron-lib)",
                "device.runner.dla_backend:build", deploy="dla", graphs=("dla",),
                ready="device.runner.neuron_runtime:installed", auto_bundle=1),
)}


def _installed(module: str) -> bool:
    """Found on the path, without importing: ai_edge_litert alone takes ~1.2 s to import, and every CLI
    and runner start asks which backends exist. The backend that is chosen imports for real."""
    return importlib.util.find_spec(module) is not None


def _call(target: str, *args, **kwargs):
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)(*args, **kwargs)


def available_backends() -> list[str]:
    return [name for name, spec in REGISTRY.items() if spec.missing() is None]


def choose_auto(bundle=None) -> str:
    """`auto`, for weights and bundles alike: the first available backend in the table's preference whose tokens
    equal the reference. For an exported bundle (device/runner/bundle.py) only the backends that run the graphs it
    has, as exported (it has no start-up cache to keep a rebuilt copy in): a TFLite-only bundle runs on tflite."""
    rank = (lambda s: s.auto) if bundle is None else (lambda s: s.auto_bundle)
    for spec in sorted((s for s in REGISTRY.values() if rank(s)), key=rank):
        if bundle is not None and not any(bundle.has("encoder", fmt) for fmt in spec.graphs):
            continue
        if spec.missing() is None and (spec.ready is None or _call(spec.ready)):
            return spec.name
    raise BackendError("no backend can run this model here", "pip install onnx onnxruntime")


def resolve(name: str | None, bundle=None) -> str:
    """`auto`/None -> choose_auto; anything else must be a known, available backend."""
    if name in (None, "", "auto"):
        return choose_auto(bundle)
    spec = REGISTRY.get(name)
    if spec is None:
        raise BackendError(f"unknown backend {name!r}", f"use auto or one of: {', '.join(REGISTRY)}")
    missing = spec.missing()
    if missing:
        raise BackendError(*missing)
    return name


def spec(name: str) -> BackendSpec:
    return REGISTRY[resolve(name)]


def make_backend(name: str | None, source, delegate: str | None = None, cross: str | None = None,
                 config=None):
    """`source`: WhisperWeights, or the path of an exported bundle (device/toolchain/export.py).
    `delegate`: a TFLite delegate library to load (tflite only). `cross`: kv or absorbed
    (core/model/backend.py); None is a bundle's own form, or kv for weights. `config`: the RuntimeConfig
    (device/runner/runtime_config.py; None: its defaults)."""
    from device.runner.bundle import cross_for, is_bundle, read_bundle  # NumPy and the weights: not for a help text

    bundle = read_bundle(source) if isinstance(source, (str, Path)) and is_bundle(source) else None
    name = resolve(name, bundle)
    if delegate and not REGISTRY[name].delegates:
        takes = next(s.name for s in REGISTRY.values() if s.delegates)
        raise BackendError(f"a delegate ({delegate}) needs the {takes} backend, not {name!r}",
                           f"add --backend {takes} (or ?backend={takes} in the device URL)")
    return REGISTRY[name].build(source, config=config or RuntimeConfig(), cross=cross_for(source, cross),
                                delegate=delegate, save_dir=None)


def deploy_modes() -> tuple[str, ...]:
    """`whisperkv deploy --backend`: auto ships the whole model; each other mode a row names ships what it reads."""
    return ("auto", *sorted({s.deploy for s in REGISTRY.values()} - {"auto"}))


def deploy_help() -> str:
    """`whisperkv deploy --backend` help, from the table: what each mode ships."""
    modes = {m: [s.name for s in REGISTRY.values() if s.deploy == m] for m in deploy_modes()[1:]}
    return "auto (default): the whole model; " + "; ".join(
        f"{m}: only what the {' and '.join(names)} backend reads from an exported bundle"
        for m, names in modes.items()) + " (docs/board.md)"


def backend_help(extra: str = "") -> str:
    """The --backend help every command shows, from the table."""
    first = [s.name for s in sorted((s for s in REGISTRY.values() if s.auto), key=lambda s: s.auto)]
    return (f"auto (default: the first of {', '.join(first)} that runs here; all give the reference's tokens"
            f"{extra}), or one of: " + "; ".join(f"{s.name}: {s.summary}" for s in REGISTRY.values()))
