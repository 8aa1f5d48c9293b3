"""ONNX Runtime plumbing for the onnx backends: a session opened as a RuntimeConfig says, and runs whose inputs
stay bound between calls. Imports no backend.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from device.spec.runtime_config import RuntimeConfig

NP_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}


def open_session(model: bytes | Path, cfg: RuntimeConfig, save_to: Path | None = None, prepack: bool = True):
    """`save_to`: also write the optimised graph there, its large initializers in `<name>.data` beside it."""
    import onnxruntime as ort  # ~0.3 s: the table of backends imports this module's users only to build one

    so = ort.SessionOptions()
    so.intra_op_num_threads = cfg.team
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[cfg.optimization]
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if cfg.spin else "0")
    so.add_session_config_entry("session.force_spinning_stop", "1")      # never between runs
    so.add_session_config_entry("session.disable_prepacking", "0" if prepack else "1")
    # The memory pattern (one block planned for all of a run's activations) added 43 MB to a stream's runner
    # on top of the arena, for no measured speed.
    so.enable_cpu_mem_arena, so.enable_mem_pattern = cfg.arena, False
    if cfg.profile:
        so.enable_profiling, so.profile_file_prefix = True, cfg.profile
    if save_to is not None:
        so.optimized_model_filepath = str(save_to)
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name", save_to.name + ".data")
        so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    return ort.InferenceSession(model if isinstance(model, bytes) else str(model), so,
                                providers=["CPUExecutionProvider"])


@dataclass
class _Binding:
    io: object                                   # the session's onnxruntime.IOBinding
    sources: tuple = field(default_factory=tuple)  # the arrays its inputs are views of (empty: some were copies)


class BoundRuns:
    """Runs of sessions on one step's inputs (x, mask, cross K/V, cache) that stay bound to ONNX Runtime while the
    same arrays come back, written in place (the stepper's x, the cache and its mask until the cache grows, a
    window's cross K/V): wrapping the step's 26 inputs anew at every call cost ~0.05-0.1 ms a token
    (docs/benchmarks.md). When an input had to be copied (another layout, fp16), all are bound anew at every call.
    One binding per session and thread; `reset` drops them with the last window's arrays."""

    def __init__(self, feeds_and_views: Callable[..., tuple[dict, bool]]):
        # inputs -> (feeds by name, whether each is a view). A backend's method, held weakly: the backend holds
        # this object, and a strong reference back would leave both, with their sessions' memory, to the cycle
        # collector, which counts Python objects and not the hundreds of MB ONNX Runtime holds for them.
        self._feeds_and_views = weakref.WeakMethod(feeds_and_views)
        self._local = threading.local()

    def reset(self) -> None:
        self._local = threading.local()

    def run(self, session, outputs: list[str], *inputs: np.ndarray) -> list[np.ndarray]:
        bound = self._local.__dict__
        b = bound.get(session)
        if b is None:
            b = bound[session] = _Binding(session.io_binding())
            for name in outputs:
                b.io.bind_output(name, "cpu")
        if len(b.sources) != len(inputs) or any(s is not t for s, t in zip(b.sources, inputs)):
            feeds, views = self._feeds_and_views()(*inputs)
            for name, arr in feeds.items():
                b.io.bind_cpu_input(name, arr)
            b.sources = inputs if views else ()
        session.run_with_iobinding(b.io)
        return b.io.copy_outputs_to_cpu()
