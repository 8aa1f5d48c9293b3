"""The STAND-IN APU: a process apart that computes the STAND-IN Neuron runtime's graphs (neuron_compute.py).

On a board the runtime library runs in the runner's process on the CPU and hands each graph to the APU, a
processor beside it. A stand-in library built with STANDIN_APU="SOCKET" does the same: every create, size, QoS,
run and release goes over that unix socket to this process, which computes in LiteRT on the machine it runs on.
The board in a box starts one on the PC (tools/board_box/standin.py), so its emulated Arm CPU runs the runner,
its ctypes calls and the runtime library, and the network's arithmetic, the NPU's on a board, runs natively.

    python3 -m tests.device.runner.standin.apu SOCKET [ROOT]

SOCKET is made relative to ROOT's folder of it when ROOT is given (a socket's path is at most 107 bytes); ROOT is
the board's file tree on this machine: a path the runtime names (a `.dla`, the profiler's report) is read and
written under it. `call` is the library's side, which neuron_compute uses when its APU is set.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from multiprocessing.connection import Client, Listener

# the environment a run or create reads (neuron_compute.py): the runner's, sent along with each call
FORWARDED_ENV = ("STANDIN_NOISE", "STANDIN_SWAP", "STANDIN_REL_NOISE", "STANDIN_EOT_FROM", "MTKNN_ENABLE_PROFILER",
                 "MTKNN_PROFILER_LOG_PATH")
_link: list = []        # the runner process's one connection, opened at its first call


def call(socket: str, name: str, args: tuple) -> int:
    """neuron_compute.NAME(*args) computed by the APU at `socket`; a run's buffers go there and back by value."""
    outputs = []
    if name == "run":
        handle, inputs, outputs = args
        args = (handle, [ctypes.string_at(a, n) for a, n in inputs], [n for _, n in outputs])
    env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
    try:
        if not _link:
            _link.append(Client(socket, family="AF_UNIX"))
        _link[0].send((name, args, env))
        reply = _link[0].recv()
    except (OSError, EOFError) as e:
        _link.clear()
        print(f"STAND-IN Neuron runtime: the STAND-IN APU at {socket} does not answer ({e})", flush=True)
        return -1
    if name != "run":
        return reply
    code, data = reply
    for (address, length), out in zip(outputs, data):
        ctypes.memmove(address, out, min(length, len(out)))
    return code


def _run_here(compute, args: tuple) -> tuple[int, list[bytes]]:
    handle, inputs, lengths = args
    ins = [(ctypes.c_char * len(d)).from_buffer_copy(d) for d in inputs]
    outs = [ctypes.create_string_buffer(n) for n in lengths]
    code = compute.run(handle, [(ctypes.addressof(b), len(b)) for b in ins],
                       [(ctypes.addressof(b), n) for b, n in zip(outs, lengths)])
    return code, [b.raw for b in outs]


def _under(root: str, path: str) -> str:
    return root + path if root and path.startswith("/") else path


def _serve(conn, root: str, lock: threading.Lock) -> None:
    from tests.device.runner.standin import neuron_compute as compute

    made = []
    while True:
        try:
            name, args, env = conn.recv()
        except (EOFError, OSError):
            break
        with lock:      # one APU: the runtimes' table and the environment are shared by every connection
            for key in FORWARDED_ENV:
                os.environ.pop(key, None)
            os.environ.update(env)
            if "MTKNN_PROFILER_LOG_PATH" in env:
                os.environ["MTKNN_PROFILER_LOG_PATH"] = _under(root, env["MTKNN_PROFILER_LOG_PATH"])
            if name == "create":
                args = (_under(root, args[0]), *args[1:])
            reply = _run_here(compute, args) if name == "run" else getattr(compute, name)(*args)
            if name == "create" and reply > 0:
                made.append(reply)
        conn.send(reply)
    with lock:          # the runner's process is gone: what it left open is released
        for handle in made:
            compute.release(handle)


def serve(socket: str, root: str = "") -> None:
    if root:
        os.chdir(root)
        socket = os.path.relpath(_under(root, socket))
    lock = threading.Lock()
    with Listener(socket, family="AF_UNIX") as listener:
        print("ready", flush=True)
        while True:
            conn = listener.accept()
            threading.Thread(target=_serve, args=(conn, root.rstrip("/"), lock), daemon=True).start()


if __name__ == "__main__":
    serve(*sys.argv[1:3])
