"""LocalTransport: the runner as a subprocess on this PC (the default device): this checkout's Python runner, or with
?runner=native the native runner built for this PC on demand (device/toolchain/native_runner_build.py); with ?dir=
the runner deployed there, as on a board (device/link/runner_choice.py)."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from core.errors import Fix, Setting
from device import ROOT
from device.link.runner_choice import NATIVE, NATIVE_EXE, chosen_runner, native_args
from device.link.transport import (
    CommandResult,
    ProcessStream,
    Progress,
    Transport,
    TransportError,
    copy_concatenated,
)
from device.link.urls import DeviceURL


class LocalTransport(Transport):
    label = "local"
    upload_method = "by a local file copy"

    def __init__(self, python: str | None = None, dir: str | None = None, runner: str | None = None):
        self.python = python or sys.executable
        # Without ?dir= the runner is this checkout (or installed package) itself.
        self.runner_dir = os.path.expanduser(dir) if dir else str(ROOT)
        self.deployed = bool(dir)
        self.runner = runner

    @classmethod
    def from_url(cls, url: DeviceURL, password: str | None = None, trust_host_key: str | None = None,
                 **options) -> LocalTransport:
        """`local` (device/link/urls.py::SCHEMES): no login, so no password or host key."""
        return cls(python=url.python, dir=url.dir, runner=url.runner)

    def start_runner(self, args: list[str]) -> ProcessStream:
        if not os.path.isdir(self.runner_dir):
            raise TransportError(f"runner directory {self.runner_dir} does not exist",
                                 Fix(f"deploy there with `whisperkv deploy --dir {self.runner_dir}`, or ",
                                     Setting("dir", verb="drop")))
        if chosen_runner(self, self.runner, self.deployed) == NATIVE:
            # only a native start needs the build: an ordinary transcribe's process stays without the toolchain
            # (tests/cli/test_main.py)
            from device.toolchain import native_runner_build

            # deployed (?dir=): the runner there, as on a board; else this checkout's, built for this PC unless it is
            exe = (os.path.join(self.runner_dir, NATIVE_EXE) if self.deployed
                   else str(native_runner_build.build(platform.machine())))
            return ProcessStream([exe, *native_args(args)], cwd=self.runner_dir)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [self.runner_dir, env.get("PYTHONPATH")]))
        return ProcessStream([self.python, "-m", "device.runner", *args], cwd=self.runner_dir, env=env)

    def run(self, argv: list[str], timeout: float = 60.0, cwd: str | None = None) -> CommandResult:
        try:
            p = subprocess.run(argv, cwd=os.path.expanduser(cwd) if cwd else None, capture_output=True,
                               timeout=timeout)
        except FileNotFoundError:
            return CommandResult(127, b"", f"{argv[0]}: not found".encode())
        except subprocess.TimeoutExpired as exc:
            raise TransportError(f"`{argv[0]}` took over {timeout:.0f} s", "check the machine's load") from exc
        return CommandResult(p.returncode, p.stdout, p.stderr)

    def home(self) -> str:
        return str(Path.home())

    def android(self) -> None:
        """This PC: never Android, nothing to ask."""
        return None

    def put(self, sources: list[Path], remote: str, progress: Progress | None = None) -> None:
        dst = Path(remote)
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".part")
        with open(tmp, "wb") as out:
            copy_concatenated(sources, out, progress)
        shutil.copymode(sources[0], tmp)
        os.replace(tmp, dst)
