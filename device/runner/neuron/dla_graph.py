"""One compiled `.dla` of a bundle on the Neuron runtime: its runtime, its slots' forms (device/runner/
neuron_slots.py) checked against the contract model.json records, and the buffers each run hands the runtime.

An input the decoder already holds in the slot's form (the fp16 KV cache and cross state on the native path, fp32
on the converted one) is handed over as it is, without a copy; any other is written into a buffer of the slot's
form, once per window for the `steady` inputs (the cross state) and once a run for the rest. Outputs land in
buffers this graph owns. A graph opened `beside` another (the step's attention variant beside the step) shares
its buffers for the slots both have in the same form: only the variant's own outputs cost extra bytes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from core.errors import ModelError
from device.runner.neuron.neuron_slots import SlotForm, derive
from device.spec.neuron_fixes import SLOT_FIX


class DlaGraph:
    def __init__(self, lib, folder: Path, entry: dict, threads: int, beside: "DlaGraph | None" = None):
        self.lib, self.threads, self.entry = lib, threads, entry
        self.file = folder / entry["file"]
        self.sha256, self.flags = entry.get("sha256", ""), list(entry.get("flags") or [])
        self.recorded = {"input": entry.get("inputs"), "output": entry.get("outputs")}
        if not all(self.recorded.values()):
            raise ModelError(f"model.json records no input/output slots for {entry['file']}", SLOT_FIX)
        self.graph = lib.open_graph(self.file, threads)
        self.forms = self._forms()
        # one table of buffers with the graph beside: a slot of the same name and form is one buffer
        self._buffers: dict[tuple, np.ndarray] = beside._buffers if beside is not None else {}
        self._steady: dict[str, tuple[np.ndarray, np.ndarray]] = {}   # name -> (array fed, its buffer)

    def _forms(self) -> dict[str, list[SlotForm]]:
        forms = {}
        for kind, sizes, padded in (("input", self.graph.input_sizes, self.graph.padded_sizes("Input")),
                                    ("output", self.graph.output_sizes, self.graph.padded_sizes("Output"))):
            recorded = self.recorded[kind]
            if len(sizes) != len(recorded):
                raise ModelError(f"{self.file.name} has {len(sizes)} {kind} slots in the runtime but model.json "
                                 f"records {len(recorded)}", SLOT_FIX)
            forms[kind] = [derive(self.file.name, kind, i, slot, size, padded[i] if padded else None,
                                  self.lib.suppressed) for i, (slot, size) in enumerate(zip(recorded, sizes))]
            self.graph.names[kind] = [s["name"] for s in recorded]
        return forms

    def form(self, name: str) -> SlotForm:
        return next(f for f in self.forms["input"] + self.forms["output"] if f.name == name)

    def _buffer(self, form: SlotForm) -> np.ndarray:
        key = (form.kind, form.name, form.native.str, form.rows, form.pitch)
        if key not in self._buffers:
            self._buffers[key] = form.buffer()
        return self._buffers[key]

    def _fed(self, form: SlotForm, value: np.ndarray, steady: bool) -> np.ndarray:
        if form.takes_as_is(value):
            return value
        held = self._steady.get(form.name)
        if steady and held is not None and held[0] is value:
            return held[1]
        if steady:      # its own buffer: the window's state stays while the steps' inputs change
            buf = form.fill(form.buffer(), value)
            self._steady[form.name] = (value, buf)
            return buf
        return form.fill(self._buffer(form), value)

    def run(self, named: dict[str, np.ndarray], steady: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
        """The named inputs in, each output's raw buffer out (SlotForm.read makes the tensor of it)."""
        ins = [self._fed(f, named[f.name], f.name in steady) for f in self.forms["input"]]
        outs = [self._buffer(f) for f in self.forms["output"]]
        self.graph.run(ins, outs)
        return {f.name: buf for f, buf in zip(self.forms["output"], outs)}

    def read(self, out: dict[str, np.ndarray], name: str, keep_native: bool = False) -> np.ndarray:
        return self.form(name).read(out[name], keep_native)

    def recreate(self) -> None:
        """A fresh runtime for the same file (its slots were checked at load)."""
        self.graph.release()
        self.graph = self.lib.open_graph(self.file, self.threads)
        self.graph.names = {k: [s["name"] for s in v] for k, v in self.recorded.items()}

    def release(self) -> None:
        self.graph.release()

    def describe(self, role: str) -> dict:
        """hello's account of the graph: its file, its compile flags and each slot's sizes and derived form."""
        return {"graph": role, "file": self.file.name, "sha256": self.sha256, "runs_on": "dla", "flags": self.flags,
                "slots": [f.describe() for f in self.forms["input"] + self.forms["output"]]}
