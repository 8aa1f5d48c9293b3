"""AdbTransport: the runner on a board reached with the `adb` client (USB or adb-over-TCP).

`adb -s SERIAL shell -T CMD` gives a binary-safe stdin/stdout stream (no pty), `adb push`
uploads files and `adb devices -l` lists what is attached. Without ?dir= the runner's folder is
/data/local/tmp/whisperkv on an Android board (device/link/android.py), ~/whisperkv on a Linux one: asked once.
"""
from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from device.link import android
from device.link.runner_choice import runner_argv
from device.link.transport import (
    CommandResult,
    ProcessStream,
    Progress,
    Transport,
    TransportError,
    shell_line,
)
from device.link.urls import DeviceURL

ADB_FIX = "install the Android platform tools (Debian: `apt install adb`) and put `adb` on PATH"


@dataclass
class AdbDevice:
    serial: str
    state: str                                   # device | unauthorized | offline | ...
    props: dict[str, str] = field(default_factory=dict)   # product, model, transport_id, ...


def _adb() -> str:
    exe = shutil.which("adb")
    if exe is None:
        raise TransportError("the `adb` client is not installed", ADB_FIX)
    return exe


def list_devices(timeout: float = 30.0) -> list[AdbDevice]:
    """`adb devices -l`, parsed."""
    try:
        p = subprocess.run([_adb(), "devices", "-l"], capture_output=True, timeout=timeout, text=True)
    except subprocess.TimeoutExpired as exc:
        raise TransportError("`adb devices -l` hung", "run `adb kill-server` and retry") from exc
    if p.returncode != 0:
        raise TransportError(f"`adb devices -l` failed: {p.stderr.strip()}", "run `adb kill-server` and retry")
    out = []
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2 or line.startswith(("List of devices", "*")):
            continue
        props = dict(kv.split(":", 1) for kv in parts[2:] if ":" in kv)
        out.append(AdbDevice(parts[0], parts[1], props))
    return out


class AdbTransport(Transport):
    upload_method = "with adb push"

    def __init__(self, serial: str, python: str | None = None, dir: str | None = None, runner: str | None = None):
        self.serial = serial
        self.label = f"adb://{serial}"
        self.python = python or "python3"
        self.dir = dir
        self.runner = runner
        self._checked = False

    @classmethod
    def from_url(cls, url: DeviceURL, password: str | None = None, trust_host_key: str | None = None,
                 **options) -> AdbTransport:
        """`adb://SERIAL` (device/link/urls.py::SCHEMES): adb logs in by itself, so no password or host key."""
        return cls(url.host, python=url.python, dir=url.dir, runner=url.runner)

    @property
    def runner_dir(self) -> str:
        """?dir=, else the folder Android lets adb's shell run programs from, else ~/whisperkv."""
        return self.dir or (android.RUNNER_DIR if self.android() else android.LINUX_DIR)

    def _check(self) -> None:
        if self._checked:
            return
        devices = list_devices()
        me = next((d for d in devices if d.serial == self.serial), None)
        if me is None:
            seen = ", ".join(f"{d.serial} ({d.state})" for d in devices) or "none"
            raise TransportError(f"no adb device {self.serial!r} (attached: {seen})",
                                 "plug the board in with USB debugging on, or `adb connect HOST:PORT`")
        if me.state != "device":
            fixes = {"unauthorized": "accept the USB debugging prompt on the board",
                     "offline": "replug the cable or run `adb reconnect`"}
            raise TransportError(f"adb device {self.serial} is {me.state}", fixes.get(me.state, "replug the board"))
        self._checked = True

    def _argv(self, *args: str) -> list[str]:
        return [_adb(), "-s", self.serial, *args]

    def start_runner(self, args: list[str]) -> ProcessStream:
        self._check()
        line = shell_line(runner_argv(self, args, self.runner), self.runner_dir)
        return ProcessStream(self._argv("shell", "-T", line))

    def run(self, argv: list[str], timeout: float = 60.0, cwd: str | None = None) -> CommandResult:
        self._check()
        try:
            p = subprocess.run(self._argv("shell", "-T", shell_line(argv, cwd)), capture_output=True,
                               timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise TransportError(f"`{argv[0]}` on {self.label} took over {timeout:.0f} s",
                                 "check the board's load") from exc
        return CommandResult(p.returncode, p.stdout, p.stderr)

    def put(self, sources: list[Path], remote: str, progress: Progress | None = None) -> None:
        self._check()
        total = sum(s.stat().st_size for s in sources)
        parts = [f"{remote}.part{i}" for i in range(len(sources))]
        done = 0
        for src, part in zip(sources, parts):
            p = subprocess.run(self._argv("push", str(src), part), capture_output=True, text=True)
            if p.returncode != 0:
                raise TransportError(f"`adb push {src.name}` to {self.label} failed: {(p.stderr or p.stdout).strip()}",
                                     "check free space and permissions on the board")
            done += src.stat().st_size
            if progress:
                progress(done, total)
        # Several sources are one file on the board (the split model.bin): join them there.
        quoted = " ".join(map(shlex.quote, parts))
        join = (f"mv {quoted} {shlex.quote(remote)}" if len(parts) == 1 else
                f"cat {quoted} > {shlex.quote(remote)} && rm -f {quoted}")
        res = self.run(["sh", "-c", join])
        if res.rc != 0:
            raise TransportError(f"cannot assemble {remote} on {self.label}: {res.stderr.decode(errors='replace')}",
                                 "check free space on the board")

