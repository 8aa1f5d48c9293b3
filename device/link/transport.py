"""What every transport offers: a byte stream to a runner, one-shot commands, and file upload."""
from __future__ import annotations

import collections
import json
import os
import select
import shlex
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.errors import Fix, Setting, WhisperKVError
from device.link import android

Progress = Callable[[int, int], None]        # (bytes done, bytes total) of the current file
CHUNK = 1 << 20


class TransportError(WhisperKVError):
    code = "transport"


class LinkLost(WhisperKVError):
    """The runner's stream ended or broke. `received` holds the events that did arrive."""

    code = "link_lost"

    def __init__(self, problem: str, fix: str = "", received: list | None = None):
        super().__init__(problem, fix)
        self.received = list(received or [])


@dataclass
class CommandResult:
    rc: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


class Stream(ABC):
    """A duplex byte stream to a runner process."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """All of data, or LinkLost."""

    @abstractmethod
    def read(self, timeout: float | None) -> bytes:
        """Some bytes; b"" at EOF; TimeoutError if none came within timeout seconds."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def stderr_tail(self) -> str:
        """The last lines the runner logged, to explain a failure."""


class Transport(ABC):
    label = "device"
    runner_dir: str = ""        # where device/ and core/ live on the device
    python: str = "python3"
    runner: str | None = None   # ?runner=: python or native; None: the device's own (device/link/runner_choice.py)
    upload_method: str = ""     # how put() sends files ("over sftp", ...), once it has sent one
    _android: object = ...      # Android's release once asked (None: not Android); ...: not asked yet

    @abstractmethod
    def start_runner(self, args: list[str]) -> Stream: ...

    @abstractmethod
    def run(self, argv: list[str], timeout: float = 60.0, cwd: str | None = None) -> CommandResult: ...

    @abstractmethod
    def put(self, sources: list[Path], remote: str, progress: Progress | None = None) -> None:
        """Write the concatenation of `sources` to the absolute device path `remote`."""

    def android(self) -> str | None:
        """Android's release where the device runs Android, else None: asked once a transport
        (device/link/android.py), then remembered."""
        if self._android is ...:
            res = self.run(android.PROBE, timeout=60)
            self._android = android.release(res.text) if res.rc == 0 else None
        return self._android

    def home(self) -> str:
        res = self.run(["sh", "-c", 'printf %s "$HOME"'])
        if res.rc != 0 or not res.text.startswith("/"):
            raise TransportError(f"cannot find the home directory on {self.label}",
                                 Fix(Setting("dir", verb="pass", absolute=True)))
        return res.text

    def resolve(self, path: str) -> str:
        """An absolute device path for `path`, expanding a leading ~."""
        if path == "~" or path.startswith("~/"):
            return self.home() + path[1:]
        return path

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def copy_concatenated(sources: list[Path], out, progress: Progress | None = None) -> None:
    """Write the sources one after another into the open file `out`, reporting bytes done."""
    total = sum(s.stat().st_size for s in sources)
    done = 0
    for src in sources:
        with open(src, "rb") as f:
            while chunk := f.read(CHUNK):
                out.write(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)


def shell_line(argv: list[str], cwd: str | None = None) -> str:
    """A POSIX sh command line; a leading ~/ in cwd stays unquoted so the device shell expands it."""
    cmd = shlex.join(argv)
    if not cwd:
        return cmd
    if cwd == "~" or cwd.startswith("~/"):
        where = '"$HOME"' + (shlex.quote(cwd[1:]) if len(cwd) > 1 else "")
    else:
        where = shlex.quote(cwd)
    return f"cd {where} && exec {cmd}"


class _StderrTail:
    def __init__(self, lines: int = 40):
        self.lines: collections.deque[str] = collections.deque(maxlen=lines)

    def feed(self, data: bytes) -> None:
        for line in data.decode("utf-8", "replace").splitlines():
            if line.strip():
                self.lines.append(line)

    def text(self) -> str:
        return "\n".join(self.lines)


class ProcessStream(Stream):
    """A runner child process (local, or `adb shell -T`) talking over its stdin/stdout pipes."""

    def __init__(self, argv: list[str], cwd: str | None = None, env: dict | None = None):
        try:
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, bufsize=0)
        except OSError as exc:
            raise TransportError(f"cannot start {argv[0]}: {exc}", "check that it is installed and on PATH") from exc
        self._tail = _StderrTail()
        self._err_thread = threading.Thread(target=self._drain, daemon=True, name="runner-stderr")
        self._err_thread.start()
        self._out = self.proc.stdout.fileno()

    def _drain(self) -> None:
        fd = self.proc.stderr.fileno()
        try:
            while data := os.read(fd, 1 << 14):
                self._tail.feed(data)
        except OSError:
            pass

    def write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[self.proc.stdin.write(view):]
        except (OSError, ValueError) as exc:
            raise LinkLost(f"the runner stopped reading ({exc})", "see the runner log") from exc

    def read(self, timeout: float | None) -> bytes:
        ready, _, _ = select.select([self._out], [], [], timeout)
        if not ready:
            raise TimeoutError
        return os.read(self._out, 1 << 16)

    def stderr_tail(self) -> str:
        if self.proc.poll() is not None:
            self._err_thread.join(timeout=1.0)
        return self._tail.text()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()       # EOF: the runner cancels and exits by itself
            except OSError:
                pass
            deadline = time.monotonic() + 3.0
            while self.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            if self.proc.poll() is None:
                self.proc.kill()
        self.proc.wait()
        self._err_thread.join(timeout=1.0)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass


def read_json(transport: Transport, path: str, cwd: str | None = None) -> dict | None:
    """A JSON file on the device read with `cat` (no Python needed there); None when it is missing or not a JSON
    object."""
    res = transport.run(["cat", path], timeout=60, cwd=cwd)
    try:
        doc = json.loads(res.text) if res.rc == 0 else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None
