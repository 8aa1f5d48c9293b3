"""The native tables (docs/native-tables.md; names and layout in device/spec/native_tables.py): what the Python runner
computes from tokenizer.json and the weights, computed once on the PC so that a runner in C reads flat files.

- each token's raw bytes, as core/model/tokenizer.py decodes them (b"" for special and timestamp tokens);
- the special ids, the language tokens and the suppress lists of core/decode/logit_rules.py, with the timestamp
  rules' two constants of core/decode/timestamps.py;
- the token and positional embeddings in fp16, the dtype of the dla backend's native `x` slot.

The writer is `write_native_tables`; the readers (`read_native_tables`, `unpack_token_bytes`, `read_embedding`) make
the checks a native runner makes, and `suppressed_ids` rebuilds the decoder's suppressed set from the tables as a
native runner does, so a test can hold both against the Python decoder.
"""
from __future__ import annotations

import json
import struct
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from core.decode.logit_rules import LogitRules
from core.decode.options import DecodeOptions
from core.decode.timestamps import MAX_INITIAL_TIMESTAMP, TIME_PRECISION
from core.errors import ModelError
from core.model.dims import ModelDims
from core.model.tokenizer import WhisperTokenizer
from device.spec import native_tables as spec

EXPORT_FIX = spec.FIX
LITTLE_F16 = np.dtype("<f2")
# magic, version, token count, byte count
HEADER = struct.Struct("<4sIII")


def token_pieces(tokenizer: WhisperTokenizer, n_vocab: int) -> list[bytes]:
    """Every id's bytes, 0 ≤ id < n_vocab, as the Python runner streams them."""
    return [tokenizer.token_bytes(i) for i in range(n_vocab)]


def pack_token_bytes(pieces: list[bytes]) -> bytes:
    """TOKEN_BYTES_FILE's content: the header, n + 1 offsets, the bytes."""
    offsets = np.zeros(len(pieces) + 1, "<u4")
    np.cumsum([len(p) for p in pieces], out=offsets[1:])
    blob = b"".join(pieces)
    return HEADER.pack(spec.TOKEN_BYTES_MAGIC.encode("ascii"), spec.VERSION, len(pieces), len(blob)) + \
        offsets.tobytes() + blob


def unpack_token_bytes(data: bytes, n_vocab: int | None = None) -> list[bytes]:
    """The pieces back out of TOKEN_BYTES_FILE's content, checked as a native runner checks them: the magic, the
    version, the token count against the model's, the file's size, the offsets from 0 to the byte count and never
    decreasing."""
    def refuse(what: str):
        raise ModelError(f"the native token bytes table {what}", EXPORT_FIX)

    if len(data) < HEADER.size:
        refuse(f"is {len(data)} bytes, shorter than its {HEADER.size}-byte header")
    magic, version, n, size = HEADER.unpack_from(data)
    if magic != spec.TOKEN_BYTES_MAGIC.encode("ascii"):
        refuse(f"starts with {magic!r}, not {spec.TOKEN_BYTES_MAGIC!r}")
    if version != spec.VERSION:
        refuse(f"is version {version}, this runner reads {spec.VERSION}")
    if n_vocab is not None and n != n_vocab:
        refuse(f"holds {n} tokens, the model {n_vocab}")
    start = HEADER.size + 4 * (n + 1)
    if len(data) != start + size:
        refuse(f"is {len(data)} bytes where its header says {start + size}")
    offsets = np.frombuffer(data, "<u4", n + 1, HEADER.size).astype(np.int64)
    if offsets[0] != 0 or offsets[-1] != size or (np.diff(offsets) < 0).any():
        refuse("has offsets that do not run from 0 to its byte count in order")
    blob = data[start:]
    return [blob[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]


def fp16_table(table: np.ndarray) -> tuple[np.ndarray, bool]:
    """`table` as little-endian fp16, and whether fp16 holds its values exactly (Whisper's weights are fp16 at the
    source, so the fp32 sum the Python runner makes before the slot's fp16 is then the same sum)."""
    half = np.ascontiguousarray(table, dtype=LITTLE_F16)
    return half, bool(np.array_equal(half.astype(np.float32), np.asarray(table, np.float32)))


def tables_doc(tokenizer: WhisperTokenizer, dims: ModelDims, files: dict) -> dict:
    """JSON_FILE's content: the ids and lists the decoder reads, read from the decoder's own sources."""
    special = asdict(tokenizer.special)
    rules = LogitRules(tokenizer, DecodeOptions(), dims.n_vocab)
    return {"format": spec.FORMAT, "version": spec.VERSION,
            "dims": {"n_vocab": dims.n_vocab, "n_text_ctx": dims.n_text_ctx, "n_text_state": dims.n_text_state},
            "special": {name: special[name] for name in spec.SPECIAL_FIELDS},
            "languages": [{"code": code, "id": token} for code, token in tokenizer.languages.items()],
            "suppress": {"non_speech": list(tokenizer.non_speech_tokens), "special_from": tokenizer.special.sot,
                         "blank": [int(t) for t in rules.blank]},
            "timestamps": {"precision": TIME_PRECISION, "max_initial": round(MAX_INITIAL_TIMESTAMP / TIME_PRECISION)},
            "files": files}


def write_native_tables(out: str | Path, tokenizer: WhisperTokenizer, dims: ModelDims, token_embedding: np.ndarray,
                        positional_embedding: np.ndarray) -> dict:
    """Write the four files of spec.FILES into `out` and return JSON_FILE's content."""
    out = Path(out)
    packed = pack_token_bytes(token_pieces(tokenizer, dims.n_vocab))
    (out / spec.TOKEN_BYTES_FILE).write_bytes(packed)
    n, size = HEADER.unpack_from(packed)[2:]
    files = {"token_bytes": {"file": spec.TOKEN_BYTES_FILE, "tokens": n, "bytes": size}}
    for key, file, table, shape in (
            ("token_embedding", spec.TOKEN_EMBEDDING_FILE, token_embedding, (dims.n_vocab, dims.n_text_state)),
            ("positional_embedding", spec.POSITIONAL_EMBEDDING_FILE, positional_embedding,
             (dims.n_text_ctx, dims.n_text_state))):
        if tuple(table.shape) != shape:
            raise ModelError(f"the {key} is {list(table.shape)}, the model's dimensions say {list(shape)}",
                             "export from complete weights")
        half, exact = fp16_table(table)
        half.tofile(out / file)
        files[key] = {"file": file, "dtype": spec.EMBEDDING_DTYPE, "shape": list(shape), "exact": exact}
    doc = tables_doc(tokenizer, dims, files)
    (out / spec.JSON_FILE).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return doc


def read_embedding(path: Path, shape: list[int]) -> np.ndarray:
    """A raw fp16 table of `shape`, refused when its size is not that shape's."""
    want = int(np.prod(shape)) * LITTLE_F16.itemsize
    got = path.stat().st_size if path.is_file() else None
    if got != want:
        raise ModelError(f"the native table {path.name} is {'missing' if got is None else f'{got} bytes'}, "
                         f"{want} bytes for {shape} fp16 expected", EXPORT_FIX)
    return np.fromfile(path, LITTLE_F16).reshape(shape)


@dataclass
class NativeTables:
    doc: dict
    pieces: list[bytes]
    token_embedding: np.ndarray
    positional_embedding: np.ndarray

    def decode(self, tokens: list[int]) -> str:
        """Text of a token sequence from the tables alone, as the Python tokenizer's `decode`."""
        return b"".join(self.pieces[t] for t in tokens).decode("utf-8", errors="replace")


def read_native_tables(folder: str | Path) -> NativeTables:
    """The tables in `folder`, read and checked as a native runner reads them."""
    folder = Path(folder)
    try:
        doc = json.loads((folder / spec.JSON_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {folder / spec.JSON_FILE} ({exc})", EXPORT_FIX) from exc
    if doc.get("format") != spec.FORMAT or doc.get("version") != spec.VERSION:
        raise ModelError(f"{folder / spec.JSON_FILE} is not {spec.FORMAT} version {spec.VERSION}", EXPORT_FIX)
    missing = [f for f in spec.JSON_FIELDS if f not in doc]
    if missing:
        raise ModelError(f"{folder / spec.JSON_FILE} lacks {', '.join(missing)}", EXPORT_FIX)
    files, dims = doc["files"], doc["dims"]
    pieces = unpack_token_bytes((folder / files["token_bytes"]["file"]).read_bytes(), dims["n_vocab"])
    token = read_embedding(folder / files["token_embedding"]["file"], [dims["n_vocab"], dims["n_text_state"]])
    position = read_embedding(folder / files["positional_embedding"]["file"],
                              [dims["n_text_ctx"], dims["n_text_state"]])
    return NativeTables(doc, pieces, token, position)


def suppressed_ids(doc: dict, timestamps: bool, suppress_eot: bool = False) -> list[int]:
    """The ids suppressed at every step, from the tables alone, as core/decode/logit_rules.py's LogitRules builds
    them: the non-speech tokens, every id from special_from up but the timestamps when they are sampled, and EOT
    when a diagnostic run forbids it."""
    n_vocab, special = doc["dims"]["n_vocab"], doc["special"]
    end = special["timestamp_begin"] if timestamps else n_vocab
    ids = set(doc["suppress"]["non_speech"]) | set(range(doc["suppress"]["special_from"], end))
    return sorted(ids | ({special["eot"]} if suppress_eot else set()))
