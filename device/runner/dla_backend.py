"""The runner's `dla` backend: a bundle's compiled `.dla` graphs on MediaTek's Neuron runtime (the NPU).

One runtime per graph (encoder, decoder step), created once at load (device/runner/neuron_runtime.py). At load
every graph's slots are checked against what `whisperkv compile` recorded in model.json (their count, order and
byte sizes, from the TFLite graph it compiled): a mismatch names the file, the slot and both sizes. Each step's
inputs are handed to the runtime as the arrays the decoder keeps (the KV cache, the window's cross state, the
mask) without a copy; the outputs land in buffers this backend owns. An integer bundle's (a16w8, a8w8, mixed)
int8/int16 slots are quantized in and dequantized out with the scale and zero point model.json records.
Buffers are the tensors' own sizes (the runtime converts with conversion on); a runtime's padded sizes may be
larger and are only checked not to be smaller. `hello` names the library, its version, the API in use and, where
ncc-tflite's major version (model.json) differs from the runtime's, a warning, also logged on stderr.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from core.errors import ModelError
from core.model.backend import check_cross
from core.model.kv_cache import uncached_by_steps
from core.model.weights import ModelDims
from device.runner.int_slots import from_slot, to_slot
from device.runner.neuron_runtime import NeuronError, NeuronLibrary, version_warning
from device.runner.npu_profile import point_at

COMPILE_FIX = "compile the bundle with `whisperkv compile DIR` and deploy it with `whisperkv deploy --backend dla`"
_NP = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT8": np.int8, "INT16": np.int16, "UINT8": np.uint8,
       "INT32": np.int32}
_INT = ("INT8", "INT16", "UINT8")     # an integer graph's quantized slots (device/runner/int_slots.py)
log = logging.getLogger(__name__)


class _Slots:
    """A graph's recorded slots (model.json) and the runtime that serves them, checked against each other."""

    def __init__(self, lib: NeuronLibrary, folder: Path, entry: dict, threads: int):
        self.lib, self.threads = lib, threads
        self.file = folder / entry["file"]
        self.sha256 = entry.get("sha256", "")
        self.inputs, self.outputs = entry.get("inputs"), entry.get("outputs")
        if not self.inputs or not self.outputs:
            raise ModelError(f"model.json records no input/output slots for {entry['file']} (compiled by an "
                             "older whisperkv)", COMPILE_FIX)
        self.graph = lib.open_graph(self.file, threads)
        for kind, recorded, sizes, padded in (
                ("input", self.inputs, self.graph.input_sizes, self.graph.padded_sizes("Input")),
                ("output", self.outputs, self.graph.output_sizes, self.graph.padded_sizes("Output"))):
            if len(sizes) != len(recorded):
                raise ModelError(f"{self.file.name} has {len(sizes)} {kind} slots in the runtime but model.json "
                                 f"records {len(recorded)}", COMPILE_FIX)
            for i, (slot, size) in enumerate(zip(recorded, sizes)):
                if size != slot["bytes"] or (padded and padded[i] < slot["bytes"]):
                    raise ModelError(f"{self.file.name} {kind} slot {i} ({slot['name']}) is {size} bytes in the "
                                     f"runtime (padded {padded[i] if padded else '?'}) but model.json records "
                                     f"{slot['bytes']}", COMPILE_FIX)
            for slot in recorded:
                if slot["dtype"] in _INT and "scale" not in slot:
                    raise ModelError(f"model.json records no scale for the integer {kind} {slot['name']} of "
                                     f"{self.file.name} (compiled by an older whisperkv)", COMPILE_FIX)
        self.out = [np.empty(s["shape"], _NP[s["dtype"]]) for s in self.outputs]
        self._steady: dict[str, tuple[np.ndarray, np.ndarray]] = {}   # name -> (array fed, its integer form)

    def recreate(self) -> None:
        """A fresh runtime for the same file (its slots were checked at load)."""
        self.graph.release()
        self.graph = self.lib.open_graph(self.file, self.threads)

    def _fed(self, slot: dict, value: np.ndarray, steady: tuple[str, ...]) -> np.ndarray:
        if slot["dtype"] not in _INT:
            return np.ascontiguousarray(value, _NP[slot["dtype"]])
        name = slot["name"]
        held = self._steady.get(name)
        if held is not None and held[0] is value:
            return held[1]
        fed = to_slot(value, _NP[slot["dtype"]], slot["scale"], slot["zero_point"])
        if name in steady:
            self._steady[name] = (value, fed)
        return fed

    def run(self, named: dict[str, np.ndarray], steady: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
        """Float arrays in, float arrays out: an integer slot's values go through its recorded scale. The
        `steady` inputs (a window's cross state: 37 MB of K/V) are quantized once while the same array comes."""
        ins = [self._fed(s, named[s["name"]], steady).reshape(s["shape"]) for s in self.inputs]
        self.graph.run(ins, self.out)
        return {s["name"]: from_slot(a, s["scale"], s["zero_point"]) if s["dtype"] in _INT else a
                for s, a in zip(self.outputs, self.out)}


class DlaBackend:
    """Encoder and decoder step as compiled `.dla` graphs on the Neuron runtime; embeddings on the CPU."""

    name = "dla"

    def __init__(self, bundle, neuron_lib: str | None = None, threads: int = 1, npu_profile: str | None = None,
                 neuron_api: str | None = None, neuron_qos: bool = True):
        dla = bundle.manifest.get("dla")
        if not dla or not {"encoder", "decoder_step"} <= set(dla.get("graphs", {})):
            raise ModelError(f"the bundle at {bundle.path} has no compiled .dla graphs", COMPILE_FIX)
        self.dims: ModelDims = bundle.dims
        self.sha256, self.cross = bundle.model_sha256, check_cross(bundle.cross)
        self.soc, self.dtype = dla.get("soc", ""), bundle.dtype
        self._cross_names = ("F",) if self.cross == "absorbed" else ("cross_k", "cross_v")
        self.token_embedding, self.positional_embedding = bundle.token_embedding, bundle.positional_embedding
        self.lib, self.npu_profile = NeuronLibrary(neuron_lib, neuron_api, neuron_qos), npu_profile
        self.compiler_version = str(dla.get("version") or "unknown")
        self.warning = version_warning(self.compiler_version, self.lib.version())
        if self.warning:
            log.warning("%s", self.warning)
        try:
            point_at(npu_profile, "encoder")
            self._encoder = _Slots(self.lib, bundle.path, dla["graphs"]["encoder"], threads)
            point_at(npu_profile, "decoder_step")
            self._step = _Slots(self.lib, bundle.path, dla["graphs"]["decoder_step"], threads)
        except NeuronError as exc:
            if not self.warning:
                raise
            raise NeuronError(f"{exc.problem}; {self.warning.split(': ')[0]}", self.warning.split("; ")[-1]) from None

    @classmethod
    def from_bundle(cls, path: str | Path, neuron_lib: str | None = None, npu_profile: str | None = None,
                    neuron_api: str | None = None, neuron_qos: bool = True) -> "DlaBackend":
        from device.runner.bundle import read_bundle

        return cls(read_bundle(path), neuron_lib, npu_profile=npu_profile, neuron_api=neuron_api,
                   neuron_qos=neuron_qos)

    def flush_profile(self) -> None:
        """With the profiler on: release each runtime, so that it writes its report, and create it again
        (device/runner/npu_profile.py says why, and what a board must confirm)."""
        for graph, slots in (("encoder", self._encoder), ("decoder_step", self._step)):
            point_at(self.npu_profile, graph)
            slots.recreate()

    def describe(self) -> dict:
        """What `hello` reports: the runtime library, its version and the API in use, each graph's .dla, all of
        it on the NPU."""
        version = self.lib.version()
        return {"runtime": "neuron", "library": self.lib.path, **({"library_version": version} if version else {}),
                "api": self.lib.api, "qos": self._encoder.graph.qos, "compiler_version": self.compiler_version,
                **({"version_warning": self.warning} if self.warning else {}),
                "soc": self.soc, "weights": self.dtype, "cross": self.cross,
                "graphs": [{"graph": g, "file": s.file.name, "sha256": s.sha256, "runs_on": "dla"}
                           for g, s in (("encoder", self._encoder), ("decoder_step", self._step))]}

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        out = self._encoder.run({"mel": mel})
        # copies: the next window's encode reuses the output buffers, and the decoder keeps this window's state
        first = np.array(out[self._cross_names[0]], np.float32)
        return (first, None) if self.cross == "absorbed" else (first, np.array(out["cross_v"], np.float32))

    def step(self, x, self_k, self_v, cross_k, cross_v, mask):
        named = {"x": x, "self_k": self_k, "self_v": self_v, "mask": mask,
                 **dict(zip(self._cross_names, (cross_k, cross_v)))}
        out = self._step.run(named, steady=self._cross_names)
        return (np.array(out["logits"], np.float32), np.array(out["new_k"], np.float32),
                np.array(out["new_v"], np.float32))

    def full(self, x, cross_k, cross_v, mask):
        return uncached_by_steps(self, x, cross_k, cross_v)

    def close(self) -> None:
        for s in (self._encoder, self._step):
            s.graph.release()


def build(source, *, config, **_) -> DlaBackend:
    """The registry's factory (device/runner/backends.py): a compiled bundle only, on `config.neuron_lib`."""
    if not isinstance(source, (str, Path)):
        raise ModelError("the dla backend runs a compiled bundle, not weights",
                         "export and compile one (`whisperkv export --format tflite --out DIR`, `whisperkv compile "
                         "DIR`), deploy it with `whisperkv deploy --backend tflite --model DIR`, and pass ?model=DIR")
    return DlaBackend.from_bundle(source, config.neuron_lib, config.npu_profile, config.neuron_api, config.neuron_qos)
