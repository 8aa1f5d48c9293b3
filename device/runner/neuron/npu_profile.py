"""The Neuron runtime's own profiler, on the runner's side: switched on by environment, its CSV reports gathered.

MediaTek's Neuron runtime profiles when `MTKNN_ENABLE_PROFILER=1` and writes its report (several CSV tables) to
the full file path in `MTKNN_PROFILER_LOG_PATH`, whose folder must exist (../shared/NEUROPILOT.md). The runner
(`--npu-profile`) gives each graph its own file: the dla backend points the path at `<graph>.csv` just before it
creates that graph's runtime, so a report names its graph by its file. Two things only a board can confirm: that
the runtime reads the path when a runtime is created (if it reads it later, both graphs' reports land in the last
file named), and that it writes the report when the runtime is released, which is why the dla backend releases and
re-creates its runtimes after each request in this mode (`DlaBackend.flush_profile`). Other backends that reach
the runtime (TFLite with the Neuron delegate) write to `delegate.csv` whenever the runtime does.
"""
from __future__ import annotations

import os
from pathlib import Path

ENABLE, LOG_PATH = "MTKNN_ENABLE_PROFILER", "MTKNN_PROFILER_LOG_PATH"
MAX_TEXT = 512 << 10      # a report sent back is cut here: an event's header must stay under the protocol's 1 MiB


def switch_on(folder: str) -> Path:
    """Turn the profiler on for this process, before any backend loads; the folder is made and emptied."""
    path = Path(folder).resolve()
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.csv"):
        old.unlink()
    os.environ[ENABLE] = "1"
    os.environ[LOG_PATH] = str(path / "delegate.csv")
    return path


def point_at(folder: str | None, graph: str) -> None:
    """The report file of the graph whose runtime is created next."""
    if folder:
        os.environ[LOG_PATH] = str(Path(folder).resolve() / f"{graph}.csv")


def gather(folder: str) -> list[dict]:
    """The reports written since the last call, as the `npu_profile` event carries them; the files are removed so
    that the next request's reports are its own."""
    files = []
    for path in sorted(Path(folder).glob("*.csv")):
        text = path.read_text(errors="replace")
        path.unlink()
        files.append({"name": path.name, "text": text[:MAX_TEXT], **({"cut": True} if len(text) > MAX_TEXT else {})})
    return files
