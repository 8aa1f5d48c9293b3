"""Shared fixtures of the native runner's tests: the host library that lets a C program load the STAND-IN Neuron
runtime (it computes by calling back into Python), both runners started on one compiled bundle, and how their
answers are compared."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import sysconfig
from functools import cache
from pathlib import Path

import pytest

from device import protocol as P
from device.link.transport import ProcessStream
from device.runner.serve.agent import ROOT
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library
from tests.device.link_helpers import RawRunner

HOST_C = """#include <Python.h>
__attribute__((constructor)) static void start(void) {
    if (Py_IsInitialized()) return;
    Py_InitializeEx(0);
    PyEval_SaveThread();
}
"""


@pytest.fixture(scope="module")
def host_env(tmp_path_factory) -> dict:
    """The environment that lets a C program load the STAND-IN runtime: an interpreter started by a preloaded
    host library, finding this Python's packages (LiteRT, NumPy)."""
    out = tmp_path_factory.mktemp("host")
    (out / "host.c").write_text(HOST_C)
    libdir, version = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDVERSION")
    subprocess.run(["cc", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(out / "host.c"), "-o",
                    str(out / "libhost.so"), f"-L{libdir}", f"-lpython{version}", f"-Wl,-rpath,{libdir}"], check=True)
    return dict(os.environ, LD_PRELOAD=str(out / "libhost.so"), PYTHONHOME=sys.base_prefix,
                PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


class Runner(RawRunner):
    """One runner process (either kind) driven frame by frame."""

    def __init__(self, argv: list[str], env: dict | None = None):
        self.stream = ProcessStream(argv, cwd=str(ROOT), env=env)
        self.parser = P.FrameParser(max_payload=0)
        self.pending: list = []


def runner_argv(kind: str, bundle: Path, lib: str, *more: str) -> list[str]:
    """How each runner is started on the same bundle and Neuron library (`kind`: python or native)."""
    from device.toolchain.native_runner_build import build

    head = [sys.executable, "-m", "device.runner", "--backend", "dla"] if kind == "python" else [str(build("x86_64"))]
    return [*head, "--model", str(bundle), "--neuron-lib", lib, *more]


@pytest.fixture(scope="module")
def start_runner(host_env):
    """start_runner(kind, bundle, lib, *flags) -> a Runner; each one started is closed with the module."""
    started: list[Runner] = []

    def start(kind: str, bundle: Path, lib: str, *more: str) -> Runner:
        started.append(Runner(runner_argv(kind, bundle, lib, *more), host_env if kind == "native" else None))
        return started[-1]

    yield start
    for r in started:
        r.close()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The compiled dla bundle with the step's attention variant taken out of its model.json: the native runner has
    no step_with_attention, so the Python runner must refuse attention as it refuses it on such a backend."""
    from tests.device.runner.neuron.test_dla_backend import with_model_json_edited

    return with_model_json_edited(compiled_dla_bundle(), tmp_path_factory.mktemp("no-attention"),
                                  lambda doc: doc["dla"]["graphs"].pop("decoder_step_attention", None))


@pytest.fixture(scope="module")
def lib() -> str:
    """The STAND-IN runtime exporting both APIs (V1 is used)."""
    return str(standin_library("v1+v2"))


@pytest.fixture(scope="module")
def mel(clip_mels):
    """mel(clip, dtype): a clip's first window as a transcribe's `mel` field and payload."""
    return cache(lambda clip, dtype="float16": P.mel_to_payload(clip_mels(clip)[:1], dtype))


KINDS = ("python", "native")
# Left out of the comparison: timings and readings, and cache_hit (how many windows' cross K/V a runner keeps is
# its own: test_en after two other clips is a hit on the Python runner's EncoderCache, a miss on the native one).
TIMES = {"sent_t", "ms", "ms_total", "load_ms", "t_s", "cpu_s", "rss_mb", "mem_available_mb", "cache_hit"}
# Entropy: the Python runner's float32 dot of e·x nearly cancels against m·Z, the native runner sums e·(x − m) in
# double (rules.c), so theirs differ by up to 3e-4 (test_en, step 17: 0.568529, 0.568314); every other float agrees
# to 1e-7.
LOOSE = {"entropy": 1e-3, "mean_entropy": 1e-3}


def final(ev: dict) -> bool:
    return bool(ev.get("final")) or ev["type"] == "error"


class Pair:
    """A Python and a native runner started together on one bundle and library; each request goes to both at once,
    so the two compute side by side."""

    def __init__(self, start, bundle, lib, *flags):
        self.runners = {kind: start(kind, bundle, lib, *flags) for kind in KINDS}
        self.hello = self.send(P.encode_frame({"op": "hello", "protocol": P.PROTOCOL}), lambda ev: True)
        self.hello = {kind: events[0] for kind, events in self.hello.items()}
        self.cases: dict = {}

    def send(self, data: bytes, until=final) -> dict:
        """Each runner's events after `data`, through the first that `until` accepts."""
        for r in self.runners.values():
            r.send(data)
        return {kind: r.until(until, 120) for kind, r in self.runners.items()}

    def ask(self, header: dict, payload: bytes = b"", until=final) -> dict:
        return self.send(P.encode_frame(header, payload), until)

    def serves_on(self) -> None:
        """Both answer a hello next, and nothing came before it (read up to it, so one stray event fails one case,
        not the next)."""
        hello = P.encode_frame({"op": "hello", "protocol": P.PROTOCOL})
        for kind, events in self.send(hello, until=lambda ev: ev["type"] == "hello").items():
            assert [ev["type"] for ev in events] == ["hello"], (kind, events)


@pytest.fixture(scope="module")
def pair(start_runner, bundle, lib) -> Pair:
    """One Python and one native runner on the bundle and library, serving a module's requests."""
    return Pair(start_runner, bundle, lib)


def flat(o, path: str = "") -> dict:
    """Every leaf of a JSON value by its path (an empty list or object is a leaf)."""
    items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else None
    if not items:
        return {path: o}
    return {p: v for k, x in items for p, v in flat(x, f"{path}/{k}").items()}


def differences(python, native, leave_out=TIMES) -> list:
    """Where the native runner's answer differs from the Python runner's: floats to float32's digits (the native
    runner prints 9 significant ones), every other leaf exactly; timings and readings only present in both."""
    a, b = flat(python), flat(native)
    out = []
    for path in sorted(set(a) | set(b)):
        x, y = a.get(path, "<absent>"), b.get(path, "<absent>")
        if path.rsplit("/", 1)[-1] in leave_out and "<absent>" not in (x, y):
            continue
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y))
        tol = LOOSE.get(path.rsplit("/", 1)[-1], 2e-4)
        if not (math.isclose(x, y, rel_tol=1e-4, abs_tol=tol) if numbers else x == y):
            out.append((path, x, y))
    return out
