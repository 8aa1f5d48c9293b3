"""SshTransport: the runner on a board reached over SSH (paramiko), checked like OpenSSH checks hosts.

Honours ~/.ssh/config (HostName, User, Port, IdentityFile, UserKnownHostsFile), the default
identity files, the agent and known_hosts (including [host]:port entries). With no key, agent or password
it logs in as a development image allows: the "none" method, then an empty password. An unknown host key is
refused unless its SHA256 fingerprint is trusted explicitly; a key that differs from the recorded one is
always refused (device/link/host_keys.py). Files go over SFTP, or over an exec channel when the board's sshd
has no sftp subsystem (device/link/ssh_upload.py).
"""
from __future__ import annotations

import getpass
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from paramiko.auth_strategy import AuthStrategy, NoneAuth, Password

from device.link.host_keys import HostKeyError, TrustPolicy, changed_key_error
from device.link.host_keys import add_known_host as add_known_host  # re-exported for cli/device_cmds
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

DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")


class AuthError(TransportError):
    code = "ssh_auth"


class EmptyLogin(AuthStrategy):
    """No credentials: "none", then an empty password, for a user whose password is empty (as a Yocto image
    built with `debug-tweaks` leaves root). dropbear -B accepts only "none"; OpenSSH with PermitEmptyPasswords
    accepts both (it records an empty first password as "none"); the password is for servers offering only it."""
    # A stock Genio 520 EVK (IoT Yocto Rity 25.1.1) let root in with "none", no key or password
    # (bbudaedu/talkybuddy edge/BOARD_BRINGUP_DECISION.md).

    def __init__(self, user: str):
        super().__init__(paramiko.SSHConfig())
        self.user = user

    def get_sources(self):
        yield NoneAuth(self.user)
        yield Password(self.user, lambda: "")


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
                 dir: str | None = None, config_path: str = "~/.ssh/config", known_hosts: list[str] | None = None,
                 connect_timeout: float = 15.0, keepalive: float = 15.0, allow_agent: bool = True):
        self.target = resolve_target(host, user, port, key, config_path)
        if known_hosts is not None:
            self.target.known_hosts = [os.path.expanduser(p) for p in known_hosts]
        t = self.target
        self.label = f"ssh://{t.user}@{t.hostname}" + (f":{t.port}" if t.port != 22 else "")
        self.python = python or "python3"
        self.runner_dir = dir or "~/whisperkv"
        self.password = password
        self.trust_host_key = trust_host_key
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self.allow_agent = allow_agent
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

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
        keys = [k for k in t.identities if os.path.isfile(k)]
        agent = self.allow_agent and bool(os.environ.get("SSH_AUTH_SOCK"))
        tried = ", ".join(keys + (["the agent"] if agent else []) + (["a password"] if self.password else []))
        if not tried:
            self._check_reachable()   # the network first: keys do not matter for a host that cannot be reached
        try:
            c.connect(t.hostname, t.port, t.user, password=self.password, key_filename=keys or None,
                      allow_agent=self.allow_agent, look_for_keys=False, timeout=self.connect_timeout,
                      banner_timeout=self.connect_timeout, auth_timeout=self.connect_timeout,
                      auth_strategy=None if tried else EmptyLogin(t.user))
        except HostKeyError:
            c.close()
            raise
        except paramiko.BadHostKeyException as exc:
            c.close()
            raise changed_key_error(t.host_id, exc.key, exc.expected_key, t.known_hosts) from None
        except paramiko.PasswordRequiredException as exc:
            c.close()
            raise AuthError(f"an identity file for {self.label} is encrypted ({exc})",
                            "load it into ssh-agent with `ssh-add`, or pass ?key= with an unencrypted key") from None
        except paramiko.AuthenticationException as exc:
            c.close()
            if not tried:
                raise AuthError(f"no SSH key, agent or password to log in to {self.label}",
                                f"create a key with `ssh-keygen`, pass ?key=PATH, start ssh-agent, or use a password "
                                f"(looked for {', '.join(t.identities)})") from None
            raise AuthError(f"{self.label} refused authentication as {t.user!r} (tried {tried}): {exc}",
                            "check the user name, put your public key in the board's ~/.ssh/authorized_keys, "
                            "pass ?key=PATH, or use a password") from None
        except (socket.timeout, TimeoutError) as exc:
            c.close()
            raise TransportError(f"connecting to {self.label} timed out after {self.connect_timeout:.0f} s",
                                 "check the board is powered, on the network, and the address and port") from exc
        except (OSError, paramiko.SSHException) as exc:
            c.close()
            raise TransportError(f"cannot connect to {self.label}: {exc}",
                                 "check the address and port, and that sshd runs on the board") from None
        c.get_transport().set_keepalive(int(self.keepalive))
        return c

    def _check_reachable(self) -> None:
        """TransportError naming the network problem when nothing answers at the host's SSH port."""
        t = self.target
        try:
            socket.create_connection((t.hostname, t.port), timeout=self.connect_timeout).close()
        except socket.gaierror as exc:
            raise TransportError(f"cannot find the host {t.hostname!r}: the name does not resolve ({exc.strerror})",
                                 "check the host name, or give the board's IP address") from None
        except (socket.timeout, TimeoutError):
            raise TransportError(f"{t.hostname} did not answer on port {t.port} within {self.connect_timeout:.0f} s",
                                 "check the board is powered and on the network, and the address and port") from None
        except OSError as exc:
            raise TransportError(f"cannot reach {t.hostname} on port {t.port}: {exc.strerror or exc}",
                                 "check the address and port, and that sshd runs on the board") from None

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # --- operations ---------------------------------------------------------------------------------
    def start_runner(self, args: list[str]) -> SshStream:
        cmd = shell_line([self.python, "-m", "device.runner", *args], self.runner_dir)
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
