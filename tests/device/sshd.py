"""A throwaway OpenSSH server on 127.0.0.1 for the SSH tests and bench/link.py.

Generated host and user keys, a random free port, key-only login; `stop()` tears it down and
`kill_all()` kills it together with its session processes, which is how a link drop is simulated.
`sftp=False` leaves out the `Subsystem sftp` line, as on embedded images without sftp-server;
`restart(new_host_key=True)` brings it back on the same port with a freshly generated host key.
`empty_root=True` serves as a Yocto `debug-tweaks` image does: root logs in with an empty password. That sshd
runs in a mount namespace of its own where a copy of /etc/shadow with root's password emptied is bind-mounted
over the real one, so nothing else on the machine sees it (needs root and `unshare`). `start_dropbear()`
serves the same way with dropbear (`-B`: blank passwords allowed), the SSH server of many Yocto images.
"""
from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
DROPBEAR = shutil.which("dropbear") or "/usr/sbin/dropbear"


def sshd_available() -> bool:
    return os.path.exists(SSHD) and shutil.which("ssh-keygen") is not None


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "whisperkv-test", "-f", str(path)],
                   check=True, stdin=subprocess.DEVNULL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


@dataclass
class LocalSshd:
    workdir: Path
    port: int
    user: str
    user_key: Path           # private key authorised to log in
    host_pub: str            # "ssh-ed25519 AAAA..." of the server
    proc: subprocess.Popen
    sftp: bool = True
    command: tuple[str, ...] = ()    # the server's command line, under its private mount namespace if any

    @property
    def known_hosts_line(self) -> str:
        return f"[127.0.0.1]:{self.port} {self.host_pub}"

    def write_known_hosts(self, path: Path) -> Path:
        path.write_text(self.known_hosts_line + "\n")
        return path

    def log(self) -> str:
        return (self.workdir / "sshd.log").read_text(errors="replace")

    def kill_all(self) -> None:
        """SIGKILL the server and every session it spawned: the client sees the link drop."""
        for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill_all()

    def restart(self, new_host_key: bool = False, timeout: float = 10.0) -> None:
        """Stop and start again on the same port; with new_host_key, as a reflashed board would come back."""
        self.stop()
        if new_host_key:
            for f in ("host_key", "host_key.pub"):
                (self.workdir / f).unlink()
            _keygen(self.workdir / "host_key")
            self.host_pub = _host_pub(self.workdir)
        self.proc = _launch(self.workdir, self.port, timeout, self.command)


def _host_pub(work: Path) -> str:
    return " ".join((work / "host_key.pub").read_text().split()[:2])


def _launch(work: Path, port: int, timeout: float, command: tuple[str, ...]) -> subprocess.Popen:
    log = open(work / "sshd.log", "ab")
    proc = subprocess.Popen(command, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    log.close()
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError("sshd exited at start:\n" + (work / "sshd.log").read_text(errors="replace"))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"sshd did not listen on port {port} within {timeout} s")
            time.sleep(0.05)


def empty_root_available() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and sshd_available()


def _empty_root_prefix(work: Path) -> tuple[str, ...]:
    """unshare + bind mount: only this sshd (a private mount namespace) reads root's password as empty."""
    lines = Path("/etc/shadow").read_text().splitlines()
    shadow = work / "shadow"
    shadow.write_text("".join((":".join(["root", "", *ln.split(":")[2:]]) if ln.startswith("root:") else ln) + "\n"
                              for ln in lines))
    shadow.chmod(0o600)
    return ("unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'mount --bind "{shadow}" /etc/shadow && exec "$0" "$@"')


def start_sshd(workdir: str | Path, timeout: float = 10.0, sftp: bool = True, empty_root: bool = False) -> LocalSshd:
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)   # privilege separation directory
    _keygen(work / "host_key")
    _keygen(work / "user_key")
    shutil.copy(work / "user_key.pub", work / "authorized_keys")
    port = _free_port()
    (work / "sshd_config").write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {work / 'host_key'}",
        f"AuthorizedKeysFile {work / 'authorized_keys'}", "PubkeyAuthentication yes",
        *(["PasswordAuthentication yes", "PermitEmptyPasswords yes", "PermitRootLogin yes"] if empty_root else
          ["PasswordAuthentication no", "PermitRootLogin prohibit-password"]),
        "KbdInteractiveAuthentication no", f"PidFile {work / 'sshd.pid'}", "StrictModes no", "UsePAM no",
        *(["Subsystem sftp internal-sftp"] if sftp else []), "LogLevel VERBOSE", ""]))
    command = (*(_empty_root_prefix(work) if empty_root else ()), SSHD, "-D", "-e", "-f", str(work / "sshd_config"))
    proc = _launch(work, port, timeout, command)
    return LocalSshd(work, port, "root" if empty_root else getpass.getuser(), work / "user_key", _host_pub(work),
                     proc, sftp, command)


def dropbear_available() -> bool:
    return os.path.exists(DROPBEAR) and shutil.which("dropbearkey") is not None


def start_dropbear(workdir: str | Path, timeout: float = 10.0) -> LocalSshd:
    """dropbear -B, root's password empty (in the private mount namespace): it lets root in with "none"."""
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    key = work / "host_key"
    subprocess.run(["dropbearkey", "-t", "ed25519", "-f", str(key)], check=True, capture_output=True)
    pub = next(ln for ln in subprocess.run(["dropbearkey", "-y", "-f", str(key)], check=True, capture_output=True,
                                           text=True).stdout.splitlines() if ln.startswith("ssh-"))
    port = _free_port()
    command = (*_empty_root_prefix(work), DROPBEAR, "-F", "-E", "-B", "-p", f"127.0.0.1:{port}", "-r", str(key),
               "-P", str(work / "dropbear.pid"))
    proc = _launch(work, port, timeout, command)
    return LocalSshd(work, port, "root", work / "no_user_key", " ".join(pub.split()[:2]), proc, False, command)
