"""A runner with a board's packages only: given top-level modules made unimportable in runner subprocesses.

`block_in_runners(monkeypatch, folder)` writes a `sitecustomize.py` into `folder` and puts the folder first on
PYTHONPATH, which the local transport passes on (device/link/local.py adds the runner directory in front; it
holds no sitecustomize). Python imports sitecustomize at start-up, before the runner's first line: it wraps
every finder on sys.meta_path so that a blocked name is found by none of them. An import then fails with
ModuleNotFoundError and importlib.util.find_spec returns None, as on a board that lacks the package
(raising from a finder instead would also break the runner's find_spec probes, which a board never does).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# What a stock Genio 520 image does not give the dla backend (issue 42: the runner must not need them there).
BOARD_LACKS = ("tokenizers", "onnxruntime", "onnx", "tflite_runtime")

_SITECUSTOMIZE = '''\
import sys

BLOCKED = frozenset({blocked!r})


class _Hidden:
    """A meta-path finder that finds nothing under BLOCKED and defers everything else."""

    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            return None
        find = getattr(self.finder, "find_spec", None)
        return find(name, path, target) if find else None

    def __getattr__(self, attr):
        return getattr(self.finder, attr)


sys.meta_path[:] = [_Hidden(f) for f in sys.meta_path]
for _name in [m for m in sys.modules if m.partition(".")[0] in BLOCKED]:
    del sys.modules[_name]
'''


def write_blocker(folder: Path, modules: tuple[str, ...] = BOARD_LACKS) -> Path:
    """`folder`/sitecustomize.py hiding `modules` (top-level names); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE.format(blocked=tuple(sorted(modules))))
    return folder


def block_in_runners(monkeypatch, folder: Path, modules: tuple[str, ...] = BOARD_LACKS) -> Path:
    """Every runner the local transport starts during this test finds `modules` missing; returns the folder."""
    write_blocker(folder, modules)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))
    return folder


def importable(module: str, python: str = sys.executable) -> bool:
    """Whether `module` imports in a subprocess started as the local transport starts runners (this process's
    environment, the checkout as its directory)."""
    from device import ROOT

    probe = f"import importlib.util, {module}; assert importlib.util.find_spec({module!r})"
    return subprocess.run([python, "-c", probe], capture_output=True, cwd=ROOT).returncode == 0


def transcribe_clips(transport, runner_args: list[str], clips: tuple[str, ...]) -> dict[str, tuple[list[int], str]]:
    """Each clip of resources/audio, in its language (transcripts.json), through one runner started by
    `transport` with `runner_args` (e.g. ["--backend", "numpy"]): clip -> (tokens, text) of its first window."""
    from core.decode.events import DoneEvent
    from core.decode.options import DecodeOptions
    from core.model.audio import load_audio
    from core.model.mel import mel_windows
    from device.link.client import BoardClient
    from tests.conftest import AUDIO

    languages = {name: clip["language"] for name, clip in json.loads((AUDIO / "transcripts.json").read_text()).items()}
    got = {}
    with BoardClient(transport, runner_args=runner_args) as client:
        for clip in clips:
            mel = mel_windows(load_audio(AUDIO / clip))[:1]
            done = [a.event for a in client.transcribe(mel, DecodeOptions(language=languages[clip]))
                    if isinstance(a.event, DoneEvent)]
            got[clip] = (list(done[0].tokens), done[0].text)
    return got
