"""The one sha256 of files: the weights' identity (hello's model.sha256, the start-up cache's key), a bundle's
recorded files, what deploy ships and the studio's clips. Deploy's check on the board hashes with the board's bare
Python instead (device/deploy/deploy_record.py), in the same way."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

CHUNK = 1 << 22


def sha256_files(paths: Iterable[str | Path]) -> str:
    """sha256 of the files' bytes concatenated in order (the wheels split model.bin in two); one file: [path]."""
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(CHUNK), b""):
                h.update(chunk)
    return h.hexdigest()
