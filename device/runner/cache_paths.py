"""Where the runner keeps what it builds (the start-up cache, the C step's library), and the one way it writes there.

Imports no backend: the backends, the start-up cache and deploy read it.
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np


def cache_home() -> Path:
    """$WHISPERKV_CACHE, else $XDG_CACHE_HOME/whisperkv, else ~/.cache/whisperkv."""
    if os.environ.get("WHISPERKV_CACHE"):
        return Path(os.environ["WHISPERKV_CACHE"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "whisperkv"


def cache_dir(sha: str, backend: str, cross: str = "kv") -> Path:
    """A model's start-up cache for one backend (`<backend>.absorbed` for the absorbed cross-attention form)."""
    return cache_home() / sha[:16] / (backend if cross == "kv" else f"{backend}.{cross}")


@contextmanager
def staged(target: Path, merge: bool = False, last: tuple[str, ...] = ()) -> Iterator[Path]:
    """A private folder to write into, published at once when the block ends without an error: it replaces the
    folder `target` whole, or with `merge` its files move into `target` (created if need be), those named in
    `last` last. Either way a reader that finds a file finds it whole, and finds what was published before it.
    On an error the private folder goes and the error is raised; an OSError from making it means a read-only or
    full disk, for the caller to handle."""
    if merge:
        target.mkdir(parents=True, exist_ok=True)
        tmp = target / f".staged.{os.getpid()}"
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
        if merge:
            for f in sorted(tmp.iterdir(), key=lambda p: p.name in last):
                os.replace(f, target / f.name)
        else:
            shutil.rmtree(target, ignore_errors=True)
            os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def embedding_tables(directory: Path):
    """The token and positional embeddings a start-up cache keeps, memory-mapped."""
    # Plain ndarray views of the maps: np.memmap's Python-level indexing costs ~25 µs a step.
    return (np.load(directory / "token_embedding.npy", mmap_mode="r").view(np.ndarray),
            np.load(directory / "positional_embedding.npy", mmap_mode="r").view(np.ndarray))
