"""From a device profile to a decoder (device/link/decoder.py::open_decoder): the app's only way to reach a
runner (local, SSH or ADB)."""
from __future__ import annotations

import os

from device.link.connect import open_transport
from device.link.decoder import Decoder, open_decoder
from device.link.local import LocalTransport
from device.link.profile import DeviceProfile
from device.link.transport import Transport

RUNNER_NICENESS = 10


class GentleLocalTransport(LocalTransport):
    """The local runner at a lower CPU priority. On a 2-core PC the runner's NumPy threads otherwise take
    both cores and the UI thread waits ~200 ms for one (bench/gui_stalls.py); niced, it stays under 50 ms."""

    def start_runner(self, args):
        stream = super().start_runner(args)
        lower_priority(stream.proc.pid)
        return stream


def lower_priority(pid: int) -> None:
    if not hasattr(os, "setpriority"):
        return
    tasks = f"/proc/{pid}/task"
    tids = [int(t) for t in os.listdir(tasks)] if os.path.isdir(tasks) else [pid]
    for tid in tids:  # every thread: Linux keeps a nice value per thread
        try:
            os.setpriority(os.PRIO_PROCESS, tid, RUNNER_NICENESS)
        except OSError:
            pass  # the runner may already have exited; its error arrives through the link


def make_transport(profile: DeviceProfile, password: str = "") -> Transport:
    url = profile.target.url
    if url.scheme == "local":
        return GentleLocalTransport.from_url(url)
    return open_transport(profile.url(), trust_host_key=profile.target.trust_host_key, password=password or None)


def make_decoder(profile: DeviceProfile, password: str = "") -> Decoder:
    """The studio's runner serves run after run and a Live stream's pass a second: a local one keeps its buffers."""
    return open_decoder(profile.runner_target(password, "serve"), transport=make_transport(profile, password))
