"""Shared fixtures: the real Whisper base weights and the bundled clips, loaded once per session."""
from __future__ import annotations

import atexit
import ctypes
import gc
import json
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

from device.spec.runtime_config import quiet_blas_threads

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
quiet_blas_threads()        # as the CLI and the runner do: the tests' own NumPy and every process they start
# Runners started by the tests (subprocesses inherit this) build their start-up cache here, not in ~/.cache;
# ~600 MB once every backend was built, so it goes when the session ends.
if "WHISPERKV_CACHE" not in os.environ:
    os.environ["WHISPERKV_CACHE"] = tempfile.mkdtemp(prefix="whisperkv-test-cache-")
    atexit.register(shutil.rmtree, os.environ["WHISPERKV_CACHE"], True)

ROOT = Path(__file__).resolve().parent.parent
AUDIO = ROOT / "resources" / "audio"
LIBC = ctypes.CDLL(None)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's --dist loadgroup (.ci/run), a module's tests that share a module-scoped fixture (a runner,
    an exported bundle, a decoded clip) run in one worker, so that the fixture is built once, not once per worker;
    its other tests go to whichever worker is free. An explicit xdist_group mark stays as it is."""
    for item in items:
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if item.get_closest_marker("xdist_group") is None and any(
                d.scope == "module" for name in item.fixturenames for d in defs.get(name, ())):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


@lru_cache(maxsize=1)
def special_tokens():
    """The installed tokenizer's special token ids (EOT, timestamps) for synthetic runs."""
    from core.model.tokenizer import WhisperTokenizer
    from core.model.weights import find_tokenizer

    return WhisperTokenizer.from_file(find_tokenizer()).special


@pytest.fixture(scope="module", autouse=True)
def free_memory_between_modules():
    """A module's models, sessions and runners go when it ends, and the heap they used goes back to the system
    (glibc keeps freed memory otherwise): an xdist worker runs hundreds of modules, and one that kept what each
    left grew past 16 GB and was killed by the kernel's OOM killer in a CI run."""
    yield
    gc.collect()
    if hasattr(LIBC, "malloc_trim"):
        LIBC.malloc_trim(0)


@pytest.fixture(autouse=True)
def collect_garbage_between_tests():
    """Once a window exists the studio's collector runs on its GUI timer only (app/background.py), and
    between event loops that timer does not fire: collect here, on the main thread, after each test."""
    yield
    if not gc.isenabled():
        gc.collect()


@pytest.fixture(scope="session")
def references() -> dict:
    return json.loads((AUDIO / "transcripts.json").read_text())


@pytest.fixture(scope="session")
def model():
    """The installed weights on the NumPy reference backend; `model.weights` kept to build other backends."""
    from device.runner.load import load_model_source

    return load_model_source(None, "numpy", keep_weights=True)


@pytest.fixture(scope="session")
def onnx_model():
    """The installed weights on ONNX Runtime fp32: the NumPy reference's tokens (device/runner/backends.py), many
    times faster. For tests whose subject is not the backend (the decode loop, the steppers, the fallback)."""
    from device.runner.load import load_model_source

    return load_model_source(None, "onnx")


@pytest.fixture(scope="session")
def encoder_cache():
    """Cross K/V shared by every test that decodes the same clip: the encoder is the slow part."""
    from core.model.encoder_cache import EncoderCache

    return EncoderCache(max_bytes=1 << 30)


@pytest.fixture(scope="session")
def clip_mels():
    from core.model.audio import load_audio
    from core.model.mel import mel_windows

    cache: dict[str, object] = {}

    def get(name: str):
        if name not in cache:
            cache[name] = mel_windows(load_audio(AUDIO / name))
        return cache[name]

    return get


@pytest.fixture(scope="module")
def local_client():
    """A BoardClient connected to a local runner subprocess, shared by a module's tests."""
    from device.link.client import BoardClient
    from device.link.local import LocalTransport

    with BoardClient(LocalTransport()) as client:
        yield client
