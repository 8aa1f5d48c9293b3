"""One sha256 of files (core/model/file_hash.py): the weights' identity, a bundle's files, deploy's list and the
studio's clips are all hashed by it, and deploy's check on the board hashes the same way."""
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

from core.model.file_hash import CHUNK, sha256_files
from device.deploy.deploy_record import HASH_SCRIPT

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("core", "device", "app", "cli", "bench")
# hashlib's incremental and file forms: what a file's bytes are hashed with.
FILE_HASHING = re.compile(r"hashlib\.(sha256\(\)|file_digest|new\()")
# The helper, and the script deploy sends as text to a board that may hold nothing of the product yet.
ALLOWED = {"core/model/file_hash.py", "device/deploy/deploy_record.py"}


def test_files_are_hashed_concatenated_in_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"x" * (CHUNK + 3))          # crosses a chunk's end
    b.write_bytes(b"yz")
    assert sha256_files([a, b]) == hashlib.sha256(b"x" * (CHUNK + 3) + b"yz").hexdigest()
    assert sha256_files([str(b)]) == hashlib.sha256(b"yz").hexdigest()
    assert sha256_files([]) == hashlib.sha256().hexdigest()


def test_the_board_hashes_as_the_pc_does(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "f.bin").write_bytes(bytes(range(256)) * 9000)
    out = subprocess.run([sys.executable, "-c", HASH_SCRIPT, str(tmp_path), "m/f.bin", "absent"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == {"m/f.bin": sha256_files([tmp_path / "m" / "f.bin"])}


def test_no_other_module_hashes_files():
    found = sorted(str(p.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                   if FILE_HASHING.search(p.read_text()))
    assert set(found) <= ALLOWED, f"hash files with core.model.file_hash.sha256_files, not in {found}"
