"""How the runner runs its backends: one RuntimeConfig, passed whole, and the process-wide settings it implies.

A runner is started for one of three workloads (`python -m device.runner --workload NAME`), and that name is
mapped to a configuration here and nowhere else:

- `one-shot` (`whisperkv transcribe` on a local runner): one request, the machine to itself while it waits, so
  the worker threads spin between a step's nodes;
- `serve` (`whisperkv stream` and the studio on a local runner): request after request, so each graph keeps its
  activation memory between them, and the threads sleep: the UI and the microphone want the cores;
- `lean` (the default, and a board's runner): threads sleep, buffers go back after each request.

This module imports no backend: the backends, the runner's entry point and the callers that build a backend in
their own process all read it. Which of a target's settings set which field is one table,
device/spec/settings.py (`runtime_config`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

WORKLOADS = ("lean", "one-shot", "serve")
# OpenMP's workers spin ~10 ms after each parallel region by default: between tokens they would take the cores
# other processes want (the studio, a live stream). 1000 turns keep the waits inside a C step spinning (the same
# step time) and sleep within microseconds after it. libgomp reads it once, when it loads.
SLEEPY_SPINCOUNT = "1000"
# OpenBLAS (NumPy's BLAS) keeps its idle threads spinning 2^28 cycles (~0.1 s) after each call: a NumPy step every
# few ms holds a second core throughout. At 2^4 they sleep at once, at the same wall time (bench/blas_spin.py).
SLEEPY_BLAS_TIMEOUT = "4"


def machine_cores() -> int:
    """The cores this process may run on (a board's 8, this PC's 2), not a constant for one machine."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class RuntimeConfig:
    threads: int = 0                # compute threads (ONNX Runtime's intra-op pool, OpenMP's team, LiteRT's);
                                    # 0: one a core of this machine
    optimization: str = "all"       # ORT graph optimisation level: disable|basic|extended|all
    # Worker threads that spin between a run's nodes instead of sleeping pick up the ~250 nodes of a step
    # sooner: the int8b step ~17 % faster on an idle 2-core machine. They stop spinning when the run returns,
    # but inside it they take the cores other busy processes want, and then the step is up to ~1.8x slower
    # (docs/benchmarks.md, "Thread-pool spinning"). So only a one-shot transcription asks for it.
    spin: bool = False
    # Prepacked weights: the step graph runs every token and is ~15 % faster (fp32) to ~55 % faster (int8)
    # with them; the encoder runs once a window, and packing its 95 MB at every start costs more than it
    # saves on a short clip. Unpacked weights from the start-up cache stay memory-mapped.
    prepack_step: bool = True
    prepack_encoder: bool = False
    # ONNX Runtime's arena keeps each graph's activation memory between calls. Off, the encoder's ~100 MB of
    # activations go back after each window (a one-shot transcribe's peak RSS -35 MB, no cost to its single
    # window). On (a `serve` runner: a live stream, the studio), a repeated call skips the page faults of fresh
    # buffers: a stream ~11 % faster, its runner ~100 MB larger (docs/benchmarks.md, "Live transcription").
    arena: bool = False
    profile: str | None = None      # a file prefix: ONNX Runtime profiles the step session (bench/step_profile.py)
    neuron_lib: str | None = None   # dla: the Neuron runtime library; None: the first of its known paths
    neuron_api: str | None = None   # dla: "v1" or "v2"; None: V1 where the library exports it, else V2
    neuron_qos: bool = True         # dla: set the public ports' QoS where the library exports setQoSOption
    neuron_io: str | None = None    # dla: "native" (None: conversion suppressed) or "converted"
    neuron_create: str | None = None    # dla: "plain" (None: NeuronRuntime_create) or "options"
    npu_profile: str | None = None  # a folder: the Neuron runtime's profiler writes its reports there
                                    # (device/runner/neuron/npu_profile.py)

    @classmethod
    def for_workload(cls, workload: str = "lean", **overrides) -> RuntimeConfig:
        """The one mapping from a workload's name to its settings."""
        if workload not in WORKLOADS:
            raise ValueError(f"unknown workload {workload!r}; use one of: {', '.join(WORKLOADS)}")
        return cls(spin=workload == "one-shot", arena=workload == "serve", **overrides)

    @property
    def team(self) -> int:
        """`threads`, with 0 resolved to this machine's cores."""
        return self.threads or machine_cores()


def apply_process_env(config: RuntimeConfig) -> None:
    """Process-wide settings, made once before any backend loads: a library reads them when it loads, so the
    first backend built must not decide them for the others. An explicit setting in the environment wins."""
    if not config.spin:
        os.environ.setdefault("GOMP_SPINCOUNT", SLEEPY_SPINCOUNT)


def quiet_blas_threads() -> None:
    """OpenBLAS reads its timeout once, when NumPy loads: an entry point calls this before anything imports NumPy.
    An explicit setting in the environment wins."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", SLEEPY_BLAS_TIMEOUT)


def for_process(workload: str = "lean") -> RuntimeConfig:
    """What an entry point that builds backends (the runner, the CLI's in-process decoding) calls once, before any
    backend loads: the workload's configuration, its process-wide settings made."""
    config = RuntimeConfig.for_workload(workload)
    apply_process_env(config)
    return config
