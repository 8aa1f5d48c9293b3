"""SSH host keys checked as OpenSSH checks them: known_hosts first, an explicitly trusted fingerprint for
an unknown host, and a changed key refused whatever else was said."""
from __future__ import annotations

import base64
import hashlib
import os
import shlex
from pathlib import Path

import paramiko

from device.link.transport import TransportError


class HostKeyError(TransportError):
    code = "host_key"
    known_hosts_line: str | None = None    # set for an unknown key: the line that would trust it


def fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH's `SHA256:...` fingerprint of a public key."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


class TrustPolicy(paramiko.MissingHostKeyPolicy):
    """For a host known_hosts lacks: accept only the fingerprint the user trusted, else refuse."""

    def __init__(self, trusted: str | None):
        self.trusted = trusted.strip() if trusted else None

    def missing_host_key(self, client, hostname, key):
        fp = fingerprint(key)
        if self.trusted and fp == self.trusted:
            return
        if self.trusted:
            raise HostKeyError(f"the host key of {hostname} is {key.get_name()} {fp}, not the trusted {self.trusted}",
                               "check that you reach the right board; trust only the fingerprint it shows")
        host, _, port = hostname.strip("[").partition("]:")
        scan = f"ssh-keyscan {'-p ' + port + ' ' if port else ''}{host} >> ~/.ssh/known_hosts"
        err = HostKeyError(f"the host key of {hostname} is unknown ({key.get_name()} {fp})",
                           f"if that is the board's key, add it with `{scan}` or pass --trust-host-key {fp}")
        err.known_hosts_line = f"{hostname} {key.get_name()} {key.get_base64()}"
        raise err


def files_knowing(host_id: str, known_hosts: list[str]) -> list[str]:
    """The known_hosts files that hold a key for host_id (hashed entries included)."""
    out = []
    for f in known_hosts:
        if os.path.isfile(f):
            try:
                if paramiko.HostKeys(f).lookup(host_id) is not None:
                    out.append(f)
            except (OSError, paramiko.SSHException):
                continue
    return out


def changed_key_error(host_id: str, offered: paramiko.PKey, recorded: paramiko.PKey,
                      known_hosts: list[str]) -> HostKeyError:
    """The refusal of a key that differs from the one recorded: never trusted, whatever --trust-host-key says."""
    files = files_knowing(host_id, known_hosts) or ["~/.ssh/known_hosts"]
    remove = " and ".join(f"`ssh-keygen -R {shlex.quote(host_id)} -f {shlex.quote(f)}`" for f in files)
    return HostKeyError(
        f"the host key of {host_id} CHANGED: the server now shows {offered.get_name()} {fingerprint(offered)}, but "
        f"{', '.join(files)} recorded {recorded.get_name()} {fingerprint(recorded)}. Either someone is intercepting "
        "the connection (a man-in-the-middle), or the board was reflashed or reinstalled and made a new key; "
        "the connection was refused",
        f"compare the new fingerprint with the one the board's own console shows (`ssh-keygen -lf "
        f"/etc/ssh/ssh_host_{_kind(offered)}_key.pub`); only if they match, remove the old key with {remove} "
        "and connect again")


def _kind(key: paramiko.PKey) -> str:
    name = key.get_name()
    return "ecdsa" if name.startswith("ecdsa") else name.removeprefix("ssh-").removesuffix("-cert-v01@openssh.com")


def add_known_host(line: str, path: str = "~/.ssh/known_hosts") -> Path:
    """Append a host key line, as OpenSSH does when the user accepts a new host."""
    p = Path(path).expanduser()
    p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(p, "a") as f:
        f.write(line.rstrip("\n") + "\n")
    return p
