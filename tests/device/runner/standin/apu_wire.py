"""The STAND-IN APU for the STAND-IN Neuron runtime's WIRE build (wire.c): a process on the PC that computes the
graphs a runtime on a board without Python hands it (the Android board of the tests), as apu.py does for the box.

The library speaks a binary protocol, not Python's pickles: each call is one tagged value, the list [name, env,
args...] ('i' int64, 's' text and 'b' bytes with a u32 length, 'l' a u32 count of values; 'h', a run's input the
same as the one last sent for its slot), answered by an int, or for a run by [code, [outputs]]. Each connection is served by apu.py's own loop (apu._serve: the runtimes' table,
the forwarded environment, the paths under ROOT), through `WireConn`, which reads and writes that protocol.

    python3 -m tests.device.runner.standin.apu_wire SOCKET ROOT

SOCKET is the path the library has compiled in, on the board (under ROOT here); ROOT is the board's file tree.
"""
from __future__ import annotations

import os
import socket
import struct
import sys
import threading

from tests.device.runner.standin import apu

MAX_BYTES = 1 << 31       # a length past this is a link out of step, not a buffer
HELD_BYTES = 1 << 20      # wire.c's: an input this large may come as 'h', the one last sent for its slot
HELD = object()


class WireConn:
    """One library's connection, with the recv/send of the multiprocessing connection apu._serve reads."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.reader = sock.makefile("rb", buffering=1 << 20)
        self.held: dict[tuple[int, int], bytes] = {}     # (runtime, slot) -> the input last sent in full

    def _exact(self, n: int) -> bytes:
        data = self.reader.read(n)
        if len(data) != n:
            raise EOFError("the library closed its connection")
        return data

    def _value(self):
        tag = self._exact(1)
        if tag == b"i":
            return struct.unpack("<q", self._exact(8))[0]
        (n,) = struct.unpack("<I", self._exact(4))
        if n > MAX_BYTES:
            raise EOFError(f"a length of {n} bytes: the link is out of step")
        if tag == b"l":
            return [self._value() for _ in range(n)]
        if tag == b"h":
            return HELD
        if tag in (b"s", b"b"):
            data = self._exact(n)
            return data.decode() if tag == b"s" else data
        raise EOFError(f"an unknown tag {tag!r}: the link is out of step")

    def recv(self) -> tuple[str, tuple, dict]:
        name, env, *args = self._value()
        if name == "run":
            handle, inputs = args[0], args[1]
            for i, data in enumerate(inputs):
                if data is HELD:
                    inputs[i] = self.held[handle, i]
                elif len(data) >= HELD_BYTES:
                    self.held[handle, i] = data
        return name, tuple(args), dict(kv.split("=", 1) for kv in env.split("\n") if "=" in kv)

    def send(self, reply) -> None:
        self.sock.sendall(b"".join(_encode(reply)))

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def _encode(v) -> list[bytes]:
    if isinstance(v, (list, tuple)):
        return [b"l" + struct.pack("<I", len(v)), *(part for x in v for part in _encode(x))]
    if isinstance(v, (bytes, bytearray)):
        return [b"b" + struct.pack("<I", len(v)), bytes(v)]
    if isinstance(v, str):
        data = v.encode()
        return [b"s" + struct.pack("<I", len(data)), data]
    return [b"i" + struct.pack("<q", int(v))]


def _serve_one(conn: WireConn, root: str, lock: threading.Lock) -> None:
    try:
        apu._serve(conn, root, lock)
    finally:
        conn.close()


def serve(path: str, root: str) -> None:
    """Listen at `path` (a path on the board) under `root` until killed; prints "ready" once listening."""
    os.chdir(root)            # a socket's path is at most 107 bytes: bound relative to the board's root
    where = os.path.relpath(apu._under(root.rstrip("/"), path))
    os.makedirs(os.path.dirname(where) or ".", exist_ok=True)
    lock = threading.Lock()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(where)
        os.chmod(where, 0o666)    # the runner on the board runs as another user (adb's shell user)
        listener.listen(8)
        print("ready", flush=True)
        while True:
            sock, _ = listener.accept()
            threading.Thread(target=_serve_one, args=(WireConn(sock), root.rstrip("/"), lock), daemon=True).start()


if __name__ == "__main__":
    serve(*sys.argv[1:3])
