"""SshTransport: the runner on a board reached over SSH (paramiko), checked like OpenSSH checks hosts.

Honours ~/.ssh/config (HostName, User, Port, IdentityFile, UserKnownHostsFile), the default
identity files, the agent and known_hosts (including [host]:port entries). It logs in in OpenSSH's order
(device/link/ssh_login.py): "none", the keys, the agent, a password, an empty password. An unknown host key is
refused unless its SHA256 fingerprint is trusted explicitly; a key that differs from the recorded one is
always refused (device/link/host_keys.py). Files go over SFTP, or over an exec channel when the board's sshd
has no sftp subsystem (device/link/ssh_upload.py).
"""
from __future__ import annotations

import getpass
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from device.link.host_keys import HostKeyError, TrustPolicy, changed_key_error
from device.link.host_keys import add_known_host as add_known_host  # re-exported for cli/device_cmds
from device.link.runner_choice import runner_argv
from device.link.ssh_login import AuthError as AuthError  # re-exported for cli/device_cmds
from device.link.ssh_login import OpenSshOrder, unreached
from device.link.ssh_upload import OVER_EXEC, command_result, upload
from device.link.transport import (
    CommandResult,
    LinkLost,
    Progress,
    Stream,
    Transport,
    TransportError,
    _StderrTail,
    shell_line,
)
from device.link.urls import DeviceURL

DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
# paramiko's transport thread logs a failed handshake with its traceback, which logging would print to stderr
# when the application configures no logging; the failure reaches the user as one line from _connect instead.
logging.getLogger("paramiko").addHandler(logging.NullHandler())


@dataclass
class SshTarget:
    """Where and how to connect, after ~/.ssh/config is applied."""

    host: str
    hostname: str
    port: int = 22
    user: str = field(default_factory=getpass.getuser)
    identities: list[str] = field(default_factory=list)
    known_hosts: list[str] = field(default_factory=list)

    @property
    def host_id(self) -> str:
        """The name known_hosts files use: host, or [host]:port off port 22."""
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"


def resolve_target(host: str, user: str | None = None, port: int | None = None, key: str | None = None,
                   config_path: str = "~/.ssh/config") -> SshTarget:
    cfg_file = Path(config_path).expanduser()
    cfg = paramiko.SSHConfig.from_path(str(cfg_file)) if cfg_file.is_file() else paramiko.SSHConfig()
    o = cfg.lookup(host)
    identities = ([key] if key else []) + list(o.get("identityfile", []))
    if not identities:            # as OpenSSH: the default files only when none is configured
        identities = list(DEFAULT_IDENTITIES)
    known = (o.get("userknownhostsfile") or "~/.ssh/known_hosts").split()
    known.append("/etc/ssh/ssh_known_hosts")
    return SshTarget(host=host, hostname=o.get("hostname", host), port=int(port or o.get("port", 22)),
                     user=user or o.get("user") or getpass.getuser(),
                     identities=[os.path.expanduser(p) for p in identities],
                     known_hosts=[os.path.expanduser(p) for p in known])


class SshStream(Stream):
    def __init__(self, chan: paramiko.Channel):
        self.chan = chan
        self._tail = _StderrTail()
        self._err = threading.Thread(target=self._drain, daemon=True, name="ssh-stderr")
        self._err.start()

    def _drain(self) -> None:
        # Unread stderr would hold the channel's window shut, so it is always drained.
        while True:
            try:
                data = self.chan.recv_stderr(1 << 14)
            except socket.timeout:
                continue
            except Exception:
                return
            if not data:
                return
            self._tail.feed(data)

    def write(self, data: bytes) -> None:
        try:
            self.chan.sendall(data)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise LinkLost(f"the SSH channel closed ({exc})", "check the link to the board") from exc

    def read(self, timeout: float | None) -> bytes:
        self.chan.settimeout(timeout)
        try:
            return self.chan.recv(1 << 16)
        except socket.timeout:
            raise TimeoutError from None
        except (EOFError, paramiko.SSHException):
            return b""

    def stderr_tail(self) -> str:
        self._err.join(timeout=0.5)
        return self._tail.text()

    def close(self) -> None:
        try:
            self.chan.shutdown_write()          # EOF: the runner cancels and exits by itself
            deadline = time.monotonic() + 3.0
            while not self.chan.exit_status_ready() and time.monotonic() < deadline:
                time.sleep(0.02)
        except Exception:
            pass
        self.chan.close()


class SshTransport(Transport):
    def __init__(self, host: str, user: str | None = None, port: int | None = None, *, key: str | None = None,
                 password: str | None = None, trust_host_key: str | None = None, python: str | None = None,
                 dir: str | None = None, runner: str | None = None, config_path: str = "~/.ssh/config",
                 known_hosts: list[str] | None = None, connect_timeout: float = 15.0, keepalive: float = 15.0,
                 allow_agent: bool = True):
        self.target = resolve_target(host, user, port, key, config_path)
        if known_hosts is not None:
            self.target.known_hosts = [os.path.expanduser(p) for p in known_hosts]
        t = self.target
        self.label = f"ssh://{t.user}@{t.hostname}" + (f":{t.port}" if t.port != 22 else "")
        self.python = python or "python3"
        self.runner_dir = dir or "~/whisperkv"
        self.runner = runner
        self.password = password
        self.trust_host_key = trust_host_key
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self.allow_agent = allow_agent
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_url(cls, url: DeviceURL, password: str | None = None, trust_host_key: str | None = None,
                 **options) -> SshTransport:
        """`ssh://[user@]host[:port]` (device/link/urls.py::SCHEMES); `options`: the constructor's (known_hosts,
        allow_agent, config_path, ...). A host key trusted by the caller wins over the URL's ?trust_host_key=."""
        return cls(url.host, url.user, url.port, key=url.key, password=password,
                   trust_host_key=trust_host_key or url.trust_host_key, python=url.python, dir=url.dir,
                   runner=url.runner, **options)

    # --- connection ---------------------------------------------------------------------------------
    def client(self) -> paramiko.SSHClient:
        with self._lock:
            if self._client is None or not self._client.get_transport() or \
                    not self._client.get_transport().is_active():
                self._client = self._connect()
            return self._client

    def _connect(self) -> paramiko.SSHClient:
        t = self.target
        c = paramiko.SSHClient()
        for f in t.known_hosts:
            if os.path.isfile(f):
                try:
                    c.load_system_host_keys(f)
                except (OSError, paramiko.SSHException) as exc:
                    raise HostKeyError(f"cannot read {f}: {exc}", "fix or remove the broken line") from exc
        c.set_missing_host_key_policy(TrustPolicy(self.trust_host_key))
        order = OpenSshOrder(t.user, t.identities, self.password, self.allow_agent)
        try:
            c.connect(t.hostname, t.port, t.user, timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                      auth_timeout=self.connect_timeout, auth_strategy=order)
        except HostKeyError:
            c.close()
            raise
        except paramiko.BadHostKeyException as exc:
            c.close()
            raise changed_key_error(t.host_id, exc.key, exc.expected_key, t.known_hosts) from None
        except paramiko.AuthenticationException:
            c.close()
            raise order.failure(self.label) from None
        except (OSError, paramiko.SSHException) as exc:
            c.close()
            raise unreached(exc, t.hostname, t.port, self.connect_timeout, order.planned()) or \
                TransportError(f"cannot connect to {self.label}: {exc}",
                               "check the address and port, and that sshd runs on the board") from None
        c.get_transport().set_keepalive(int(self.keepalive))
        return c

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # --- operations ---------------------------------------------------------------------------------
    def start_runner(self, args: list[str]) -> SshStream:
        cmd = shell_line(runner_argv(self, args, self.runner), self.runner_dir)
        chan = self._exec(cmd)
        return SshStream(chan)

    def _exec(self, cmd: str) -> paramiko.Channel:
        try:
            chan = self.client().get_transport().open_session(timeout=self.connect_timeout)
            chan.exec_command(cmd)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise TransportError(f"cannot start a command on {self.label}: {exc}", "check sshd on the board") from exc
        return chan

    def run(self, argv: list[str], timeout: float = 60.0, cwd: str | None = None) -> CommandResult:
        chan = self._exec(shell_line(argv, cwd))
        try:
            return command_result(chan, timeout, TransportError(f"`{argv[0]}` on {self.label} took over "
                                                                f"{timeout:.0f} s", "check the board's load"))
        finally:
            chan.close()

    def put(self, sources: list[Path], remote: str, progress: Progress | None = None) -> None:
        self.upload_method = upload(self.client(), self._exec, sources, remote, progress, self.label,
                                    try_sftp=self.upload_method != OVER_EXEC)
