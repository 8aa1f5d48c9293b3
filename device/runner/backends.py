"""The runner's compute backends: one table, from which every list of them is generated.

Each row (BackendSpec) names a backend, says what it needs and how to build it; help texts, the runner's
description, the studio's combo and its tooltip, error messages, deploy's lists and `auto` all read the table.
A backend is one file with a factory plus one row here (docs/architecture.md, "How to add a backend").
Factories are named by their import path and imported only when that backend is built: the chosen backend pays
its imports (onnx, LiteRT), and the table imports none of them.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import Fix, Setting, WhisperKVError
from device.spec.backend_rows import ROWS, BackendRow
from device.spec.runtime_config import RuntimeConfig


class BackendError(WhisperKVError):
    code = "model_missing"

@dataclass(frozen=True)
class Factories:
    """A row's code: each a "module:function" imported only when it is called."""

    build: str                   # (source, *, config, cross, delegate, save_dir, **options) -> a Backend
    cached: str | None = None    # (directory, **kwargs) opening it from the start-up cache; None: it never uses one
    probe: str | None = None     # () -> (reason, fix) when this machine cannot run it, else None
    ready: str | None = None     # () -> bool, asked by `auto` only (e.g. compiles once)
    options: dict = field(default_factory=dict)   # extra keyword arguments for its factories


_ONNX, _ONNX_CACHED = "device.runner.onnx.onnx_build:build", "device.runner.onnx.onnx_build:open_cached"
FACTORIES: dict[str, Factories] = {
    "numpy": Factories("device.runner.numpy_backend:build"),
    "onnx": Factories(_ONNX, _ONNX_CACHED, options={"dtype": "fp32"}),
    "native-int8b": Factories("device.runner.native.backend:build", "device.runner.native.backend:open_cached",
                              probe="device.runner.native.library:unsupported",
                              ready="device.runner.native.library:ready"),
    "onnx-int8b": Factories(_ONNX, _ONNX_CACHED, options={"dtype": "int8b"}),
    "onnx-fp16": Factories(_ONNX, _ONNX_CACHED, options={"dtype": "fp16"}),
    "onnx-int8": Factories(_ONNX, _ONNX_CACHED, options={"dtype": "int8"}),
    "tflite": Factories("device.runner.tflite.tflite_backend:build"),
    "dla": Factories("device.runner.neuron.dla_backend:build", ready="device.runner.neuron.neuron_runtime:installed"),
}


@dataclass(frozen=True)
class BackendSpec:
    """A backend as the runner holds it: its row in the spec (device/spec/backend_rows.py) and its code."""

    row: BackendRow
    code: Factories

    @property
    def name(self) -> str:
        return self.row.name

    def missing(self) -> tuple[str, str] | None:
        """(why, fix) when this machine cannot run it; None when it can."""
        return self.row.lacks() or (_call(self.code.probe) if self.code.probe else None)

    def build(self, source, **kwargs):
        return _call(self.code.build, source, **kwargs, **self.code.options)

    def open_cached(self, directory: Path, **kwargs):
        """From the start-up cache (device/runner/startup_cache.py) of a backend with `cached`."""
        return _call(self.code.cached, directory, **kwargs, **self.code.options)


class Registry(Mapping):
    """Every backend by name, in the spec's order: its row joined with its code, as each is asked for (a row
    added to the spec's table and a factory added here make one more backend)."""

    def __getitem__(self, name: str) -> BackendSpec:
        return BackendSpec(ROWS[name], FACTORIES[name])

    def __iter__(self) -> Iterator[str]:
        return iter(ROWS)

    def __len__(self) -> int:
        return len(ROWS)


REGISTRY = Registry()


def _call(target: str, *args, **kwargs):
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)(*args, **kwargs)


def available_backends() -> list[str]:
    return [name for name, spec in REGISTRY.items() if spec.missing() is None]


def choose_auto(bundle=None) -> str:
    """`auto`, for weights and bundles alike: the first available backend in the table's preference whose tokens
    equal the reference. For an exported bundle (device/runner/bundle.py) only the backends that run the graphs it
    has, as exported (it has no start-up cache to keep a rebuilt copy in): a TFLite-only bundle runs on tflite."""
    rank = (lambda s: s.row.auto) if bundle is None else (lambda s: s.row.auto_bundle)
    for spec in sorted((s for s in REGISTRY.values() if rank(s)), key=rank):
        if bundle is not None and not any(bundle.has("encoder", fmt) for fmt in spec.row.graphs):
            continue
        if spec.missing() is None and (spec.code.ready is None or _call(spec.code.ready)):
            return spec.name
    raise BackendError("no backend can run this model here", "pip install onnx onnxruntime")


def resolve(name: str | None, bundle=None) -> str:
    """`auto`/None -> choose_auto; anything else must be a known, available backend."""
    if name in (None, "", "auto"):
        return choose_auto(bundle)
    if name not in ROWS:
        raise BackendError(f"unknown backend {name!r}", f"use auto or one of: {', '.join(REGISTRY)}")
    missing = REGISTRY[name].missing()
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
    (device/spec/runtime_config.py; None: its defaults)."""
    from device.runner.bundle import cross_for, is_bundle, read_bundle  # NumPy and the weights: not for a help text

    bundle = read_bundle(source) if isinstance(source, (str, Path)) and is_bundle(source) else None
    name = resolve(name, bundle)
    if delegate and not ROWS[name].delegates:
        takes = next(r.name for r in ROWS.values() if r.delegates)
        raise BackendError(f"a delegate ({delegate}) needs the {takes} backend, not {name!r}",
                           Fix(f"add --backend {takes} (or ", Setting("backend", takes), " in the device URL)"))
    return REGISTRY[name].build(source, config=config or RuntimeConfig(), cross=cross_for(source, cross),
                                delegate=delegate, save_dir=None)
