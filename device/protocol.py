"""The host ⇄ runner wire protocol (docs/protocol.md): framing and mel payloads, with the constants, codes and limits
of device/spec/protocol_codes.py.

NumPy is the only dependency, so the runner can import this on a bare board.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

import numpy as np

# The constants, codes and limits live in the spec, which a native runner reads too; they stay reachable here
# as `P.NAME` for every caller of the protocol.
from device.spec.protocol_codes import (  # noqa: F401
    BAD_FRAME,
    BAD_MEL,
    BAD_PROTOCOL,
    BAD_REQUEST,
    BUSY,
    ERROR_CODES,
    EVENT_TYPES,
    FEATURES,
    FRAME_TOO_LARGE,
    INTERNAL,
    INTERNAL_FIX,
    LENGTH_FORMAT,
    MAX_HEADER,
    MAX_PAYLOAD,
    MEL_DTYPES,
    MODEL_MISSING,
    N_FRAMES,
    N_MELS,
    PROTOCOL,
    REQUEST_OPS,
    RUNNER_VERSION,
    UNKNOWN_OP,
)

_LEN = struct.Struct(LENGTH_FORMAT)


class ProtocolError(Exception):
    """A request the runner must answer with an `error` event instead of serving it. `fix`: the parts of the fix at
    the message's end when it names device settings (core.errors.Fix.to_wire), for the event's `fix`."""

    def __init__(self, code: str, message: str, id: str | None = None, fix: list | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id
        self.fix = fix


def encode_frame(header: dict, payload: bytes | memoryview = b"") -> bytes:
    """One frame: length, JSON header (with payload_bytes when there is a payload), payload."""
    if payload:
        header = {**header, "payload_bytes": len(payload)}
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    return _LEN.pack(len(raw)) + raw + bytes(payload)


@dataclass
class Frame:
    header: dict
    payload: bytes = b""


@dataclass
class BadFrame:
    """What the parser yields instead of a Frame when a frame cannot be used; the stream stays in sync."""

    code: str
    message: str
    id: str | None = None


@dataclass
class FrameParser:
    """Incremental frame parser: feed() any bytes, get back complete frames or BadFrame notices.

    Oversize headers and payloads are skipped by count without being buffered, so arbitrary
    input costs memory bounded by the limits and time linear in its length.
    """

    max_header: int = MAX_HEADER
    max_payload: int = MAX_PAYLOAD
    _buf: bytearray = field(default_factory=bytearray)
    _skip: int = 0                     # bytes still to discard from an oversize frame
    _header: dict | None = None        # parsed header waiting for its payload

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        self._buf += data
        while True:
            if self._skip:
                n = min(self._skip, len(self._buf))
                del self._buf[:n]
                self._skip -= n
                if self._skip:
                    return out
            if self._header is not None:
                need = self._header["payload_bytes"]
                if len(self._buf) < need:
                    return out
                out.append(Frame(self._header, bytes(self._buf[:need])))
                del self._buf[:need]
                self._header = None
                continue
            if len(self._buf) < _LEN.size:
                return out
            (n,) = _LEN.unpack_from(self._buf)
            if n > self.max_header:
                del self._buf[:_LEN.size]
                self._skip = n
                out.append(BadFrame(FRAME_TOO_LARGE, f"header of {n} bytes exceeds the limit of "
                                    f"{self.max_header}; skipped"))
                continue
            if len(self._buf) < _LEN.size + n:
                return out
            raw = bytes(self._buf[_LEN.size:_LEN.size + n])
            del self._buf[:_LEN.size + n]
            out.append(self._parse_header(raw))
            if isinstance(out[-1], Frame) and out[-1].header.get("payload_bytes"):
                self._header = out.pop().header

    @property
    def at_boundary(self) -> bool:
        """True when no partial frame is buffered: EOF here is clean, elsewhere it truncated a frame."""
        return not self._buf and not self._skip and self._header is None

    def _parse_header(self, raw: bytes) -> Frame | BadFrame:
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            return BadFrame(BAD_FRAME, f"header is not UTF-8 JSON: {exc}")
        if not isinstance(header, dict):
            return BadFrame(BAD_FRAME, "header must be a JSON object")
        rid = header.get("id") if isinstance(header.get("id"), str) else None
        size = header.get("payload_bytes", 0)
        if type(size) is not int or size < 0:
            return BadFrame(BAD_FRAME, "payload_bytes must be a non-negative integer", rid)
        if size > self.max_payload:
            self._skip = size
            return BadFrame(FRAME_TOO_LARGE, f"payload of {size} bytes exceeds the limit of "
                            f"{self.max_payload}; skipped", rid)
        return Frame(header)


def mel_to_payload(mel: np.ndarray, dtype: str = "float16") -> tuple[dict, bytes]:
    """The `mel` header field and the payload for a [W, 80, 3000] (or [80, 3000]) array."""
    mel = np.asarray(mel)
    if mel.ndim == 2:
        mel = mel[None]
    if mel.ndim != 3 or mel.shape[1:] != (N_MELS, N_FRAMES):
        raise ProtocolError(BAD_MEL, f"mel has shape {list(mel.shape)}; expected [W, {N_MELS}, {N_FRAMES}]")
    if dtype not in MEL_DTYPES:
        raise ProtocolError(BAD_MEL, f"mel dtype {dtype!r} is not one of {MEL_DTYPES}")
    arr = np.ascontiguousarray(mel, dtype=np.dtype(dtype).newbyteorder("<"))
    return {"shape": list(arr.shape), "dtype": dtype}, arr.tobytes()


def mel_from_payload(desc: object, payload: bytes, rid: str | None = None) -> np.ndarray:
    """Validate a transcribe's `mel` field against its payload; float32 [1, 80, 3000] out."""
    if not isinstance(desc, dict):
        raise ProtocolError(BAD_REQUEST, "transcribe needs mel: {shape, dtype}", rid)
    shape, dtype = desc.get("shape"), desc.get("dtype")
    if dtype not in MEL_DTYPES:
        raise ProtocolError(BAD_MEL, f"mel dtype {dtype!r} is not one of {list(MEL_DTYPES)}", rid)
    if (not isinstance(shape, list) or len(shape) != 3 or any(type(d) is not int for d in shape)
            or shape[1:] != [N_MELS, N_FRAMES]):
        raise ProtocolError(BAD_MEL, f"mel shape {shape} is not [1, {N_MELS}, {N_FRAMES}]", rid)
    if shape[0] != 1:
        raise ProtocolError(BAD_MEL, f"mel shape {shape}: protocol {PROTOCOL} takes one 30 s window per request, "
                            f"[1, {N_MELS}, {N_FRAMES}], and the host seeks; update whisperkv on the host to one that "
                            f"speaks protocol {PROTOCOL}", rid)
    dt = np.dtype(dtype).newbyteorder("<")
    expect = shape[0] * N_MELS * N_FRAMES * dt.itemsize
    if len(payload) != expect:
        raise ProtocolError(BAD_MEL, f"mel {shape} {dtype} needs {expect} payload bytes, got {len(payload)}", rid)
    mel = np.frombuffer(payload, dtype=dt).reshape(shape).astype(np.float32)
    if not np.isfinite(mel).all():
        raise ProtocolError(BAD_MEL, "mel contains NaN or Inf values", rid)
    return mel


def internal_error(exc: BaseException, id: str | None = None) -> dict:
    """An `internal` error event for what a backend raised unexpectedly: one line, the problem and the fix."""
    first = (str(exc).strip().splitlines() or [""])[0]
    return error_event(INTERNAL, f"the runner failed unexpectedly ({type(exc).__name__}: {first}) — {INTERNAL_FIX}",
                       id)


def error_event(code: str, message: str, id: str | None = None, fix: list | None = None) -> dict:
    ev = {"type": "error", "code": code, "message": message}
    if id is not None:
        ev["id"] = id
    if fix:
        ev["fix"] = fix
    return ev
