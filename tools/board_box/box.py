"""up / down / status of the box: mounts, the box's own sshd on a loopback port, and the host key handed over.

Root logs in as on a Genio IoT Yocto development image: with an empty password (the image's `debug-tweaks`), or
with the generated key the box also trusts.

The box listens on its own loopback address (BOX_ADDR, inside 127.0.0.0/8), so the known_hosts line it adds
for `[BOX_ADDR]:PORT` can never be mistaken for another local sshd's. Its host key and the user key are made
once and kept in the cache directory: the box is the same board from one `up` to the next. Every `up`
unpacks a fresh root filesystem (a reflashed board); `down` stops every process whose root is the box,
undoes every mount, removes the known_hosts line and the unpacked tree.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from tools.board_box import devices, host, identity, offline, rootfs, standin

BOX_ADDR = "127.83.71.1"
SSHD_CONFIG = """Port {port}
ListenAddress {addr}
HostKey /etc/ssh/box_host_ed25519_key
AuthorizedKeysFile /etc/ssh/box_authorized_keys
PasswordAuthentication yes
PermitEmptyPasswords yes
KbdInteractiveAuthentication no
PermitRootLogin yes
UsePAM no
StrictModes no
PidFile /run/sshd.pid
SetEnv QEMU_CPU={cpu}
Subsystem sftp /usr/lib/openssh/sftp-server
"""


def paths() -> dict[str, Path]:
    c = host.cache_dir()
    return {"keys": c / "keys", "up": c / "up", "root": c / "up" / "root", "state": c / "up" / "state.json",
            "log": c / "up" / "sshd.log"}


def _keys() -> tuple[Path, Path]:
    """(the box's host key, the user key that logs in as root), made once."""
    k = paths()["keys"]
    k.mkdir(parents=True, exist_ok=True, mode=0o700)
    pairs = (k / "ssh_host_ed25519_key", k / "id_ed25519")
    for key in pairs:
        if not key.is_file():
            host.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "board-in-a-box", "-f", str(key)])
    return pairs


def fingerprint(pub: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", str(pub)], check=True, capture_output=True, text=True).stdout
    return out.split()[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((BOX_ADDR, 0))
        return s.getsockname()[1]


def _mount(args: list[str], where: Path) -> None:
    host.run(["mount", *args, str(where)])


def _mounts_under(root: Path) -> list[str]:
    prefix = str(root.resolve())
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == prefix or point.startswith(prefix + "/"):
            points.append(point)
    return points


PYTHON = "/usr/bin/python3"        # the system Python, as on the image


def url_for(state: dict, key: bool = False) -> str:
    """root with the image's empty password; `key` names the generated key instead."""
    url = f"ssh://root@{state['addr']}:{state['port']}?python={PYTHON}"
    return url + f"&key={state['key']}" if key else url


def up(cut_off: bool = False) -> dict:
    """The box up (unpacked fresh, built first if need be); `cut_off` leaves it with no package index."""
    host.require_root()
    host.require_tools(("debootstrap", "chroot", "ssh-keygen", "zstd", "mount", standin.CROSS_CC, "dpkg-deb"))
    host.enable_binfmt()
    p = paths()
    if p["state"].is_file():
        state = json.loads(p["state"].read_text())
        if _alive(state["pid"]):
            set_offline(cut_off)
            return status()
    if p["up"].exists():
        down()      # what an interrupted up or down left: a dead sshd, mounts, a half-removed tree
    times = {}
    t = time.monotonic()
    tar, built = rootfs.ensure()
    times.update(built)
    root = p["root"]
    times["unpack"] = rootfs.extract(tar, root)
    t_mount = time.monotonic()
    devices.mount_proc(root, p["up"])
    devices.mount_dev(root)
    _mount(["-t", "tmpfs", "-o", "size=4m,mode=755", "boxsys"], root / "sys")
    identity.write_sysfs(root / "sys")
    _mount(["-t", "tmpfs", "-o", "size=16m,mode=755", "boxrun"], root / "run")
    (root / "run/sshd").mkdir(mode=0o755)
    apu_pid = standin.start_apu(root, p["up"] / "apu.log")
    (root / "etc/environment").write_text(f"QEMU_CPU={host.QEMU_CPU}\n")
    if cut_off:
        offline.cut_off(root, BOX_ADDR)
    host_key, user_key = _keys()
    port = _free_port()
    (root / "etc/ssh/box_sshd_config").write_text(SSHD_CONFIG.format(port=port, addr=BOX_ADDR, cpu=host.QEMU_CPU))
    shutil.copy2(host_key, root / "etc/ssh/box_host_ed25519_key")
    shutil.copy2(str(host_key) + ".pub", root / "etc/ssh/box_host_ed25519_key.pub")
    shutil.copy2(str(user_key) + ".pub", root / "etc/ssh/box_authorized_keys")
    times["mounts"] = time.monotonic() - t_mount
    t_sshd = time.monotonic()
    with open(p["log"], "ab") as log:
        proc = subprocess.Popen(["chroot", str(root), "/usr/sbin/sshd", "-D", "-e", "-f", "/etc/ssh/box_sshd_config"],
                                env=host.CLEAN_ENV, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
    state = {"pid": proc.pid, "apu_pid": apu_pid, "addr": BOX_ADDR, "port": port, "root": str(root),
             "key": str(user_key),
             "fingerprint": fingerprint(Path(str(host_key) + ".pub")), "tarball": str(tar)}
    p["state"].write_text(json.dumps(state, indent=1))
    _wait_for_sshd(state, p["log"])
    times["sshd"] = time.monotonic() - t_sshd
    state["known_hosts"] = _trust(state, Path(str(host_key) + ".pub"))
    state["times"] = {k: round(v, 1) for k, v in times.items()}
    state["times"]["total"] = round(time.monotonic() - t, 1)
    state["url"] = url_for(state)
    p["state"].write_text(json.dumps(state, indent=1))
    return status()


def _wait_for_sshd(state: dict, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(state["pid"]):
            break
        try:
            with socket.create_connection((state["addr"], state["port"]), timeout=2) as s:
                if s.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            time.sleep(0.3)
    tail = log.read_text(errors="replace").strip().splitlines()[-3:]
    down()
    raise host.Missing(f"the box's sshd did not answer on {state['addr']}:{state['port']}: {' | '.join(tail)}")


def _trust(state: dict, host_pub: Path) -> str:
    """Record the box's host key in ~/.ssh/known_hosts, as a user does after checking a new board's fingerprint."""
    kind, b64 = host_pub.read_text().split()[:2]
    known = Path("~/.ssh/known_hosts").expanduser()
    known.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    line = f"[{state['addr']}]:{state['port']} {kind} {b64}"
    if not (known.is_file() and line in known.read_text().splitlines()):
        with open(known, "a") as f:
            f.write(line + "\n")
    return str(known)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _is_apu(pid: int | None) -> bool:
    try:
        return bool(pid) and b"standin.apu" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _box_pids(root: Path) -> list[int]:
    """Every process whose root directory is the box: sshd, its sessions and the runners they started."""
    real = str(root.resolve())
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if os.readlink(d / "root") == real:
                    pids.append(int(d.name))
            except OSError:
                continue
    return pids


def down() -> list[str]:
    """Stop, unmount, forget; safe to run when nothing is up. Returns what it did."""
    host.require_root()
    p = paths()
    done = []
    state = json.loads(p["state"].read_text()) if p["state"].is_file() else {}
    root = p["root"]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = _box_pids(root) if root.exists() else []
        pids += [state["apu_pid"]] if _is_apu(state.get("apu_pid")) else []
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while pids and time.monotonic() < deadline and any(_alive(x) for x in pids):
            time.sleep(0.1)
        if pids:
            done.append(f"stopped {len(pids)} process(es)")
    for point in sorted(_mounts_under(root), key=len, reverse=True):
        if subprocess.run(["umount", point], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", point], check=False)
        done.append(f"unmounted {point}")
    if state.get("known_hosts"):
        host_id = f"[{state['addr']}]:{state['port']}"
        subprocess.run(["ssh-keygen", "-R", host_id, "-f", state["known_hosts"]], capture_output=True)
        Path(state["known_hosts"] + ".old").unlink(missing_ok=True)
        done.append(f"removed {host_id} from {state['known_hosts']}")
    left = _mounts_under(root)
    if left:
        raise host.Missing(f"still mounted, so {root} was kept: {', '.join(left)}")
    if p["up"].exists():
        shutil.rmtree(p["up"])
        done.append(f"removed {p['up']}")
    return done


def status() -> dict | None:
    p = paths()
    if not p["state"].is_file():
        return None
    state = json.loads(p["state"].read_text())
    state["running"] = _alive(state["pid"])
    state["mounts"] = _mounts_under(p["root"])
    state["offline"] = offline.is_offline(p["root"])
    state["url_key"] = url_for(state, key=True)
    return state


def set_offline(cut: bool) -> bool:
    """Cut the running box off from every package index (True) or reconnect it (False); returns the state."""
    host.require_root()
    s = status()
    if not s or not s["running"]:
        raise host.Missing("the box is down: run `tools/board-in-a-box up` first")
    if cut:
        offline.cut_off(Path(s["root"]), s["addr"])
    else:
        offline.reconnect(Path(s["root"]))
    return offline.is_offline(Path(s["root"]))
