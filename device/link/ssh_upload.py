"""Uploading one file over SSH: SFTP when the server offers it, otherwise the bytes streamed into `cat` on
an exec channel. Embedded images often run dropbear, or an sshd with no `Subsystem sftp` line."""
from __future__ import annotations

import posixpath
import shlex
import time
from pathlib import Path
from typing import Callable

import paramiko

from device.link.transport import CommandResult, Progress, TransportError, copy_concatenated

OVER_SFTP = "over sftp"
OVER_EXEC = "over an exec channel (no sftp on the board)"
FINISH_S = 120.0      # after the last byte: the board flushes, chmods and renames


def open_sftp(client: paramiko.SSHClient) -> paramiko.SFTPClient | None:
    """An SFTP session, or None when the server refuses the sftp subsystem."""
    try:
        return client.open_sftp()
    except (EOFError, paramiko.SSHException):
        t = client.get_transport()
        if t is None or not t.is_active():
            raise                 # the link itself went, not just the subsystem
        return None


def put_sftp(sftp: paramiko.SFTPClient, sources: list[Path], remote: str, mode: int,
             progress: Progress | None) -> None:
    tmp = remote + ".part"
    with sftp.open(tmp, "wb") as out:
        out.set_pipelined(True)
        copy_concatenated(sources, out, progress)
    sftp.chmod(tmp, mode)
    sftp.posix_rename(tmp, remote)


def exec_upload_line(remote: str, mode: int) -> str:
    """The sh line that writes stdin to `remote` whole or not at all; every path quoted."""
    q = shlex.quote
    tmp = remote + ".part"
    return (f"mkdir -p {q(posixpath.dirname(remote) or '/')} && cat > {q(tmp)} && chmod {mode:o} {q(tmp)} "
            f"&& mv -f {q(tmp)} {q(remote)}")


class _ChannelFile:
    def __init__(self, chan: paramiko.Channel):
        self.chan = chan

    def write(self, data: bytes) -> None:
        self.chan.sendall(data)


def put_exec(chan: paramiko.Channel, sources: list[Path], remote: str, progress: Progress | None,
             label: str) -> None:
    """Stream the sources into `chan`, already running exec_upload_line(remote); an error names the board's words."""
    try:
        try:
            copy_concatenated(sources, _ChannelFile(chan), progress)
            chan.shutdown_write()           # EOF: cat finishes, then chmod and mv run
        except (OSError, EOFError, paramiko.SSHException):
            pass                            # the command ended early: its status and stderr say why
        res = command_result(chan, FINISH_S, TransportError(
            f"writing {remote} on {label} did not finish within {FINISH_S:.0f} s", "check the board's disk and load"))
    finally:
        chan.close()
    if res.rc != 0:
        said = res.stderr.decode("utf-8", "replace").strip() or f"exit status {res.rc}"
        raise TransportError(f"upload of {remote} to {label} {OVER_EXEC} failed: {said}",
                             "check free space and permissions on the board")


def command_result(chan: paramiko.Channel, timeout: float, too_long: TransportError) -> CommandResult:
    """Read a running command's stdout and stderr until it exits (both drained: either could fill the
    window and stall it); too_long is raised after timeout seconds."""
    chan.settimeout(timeout)
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    while not (chan.exit_status_ready() and not chan.recv_ready() and not chan.recv_stderr_ready()):
        if time.monotonic() > deadline:
            raise too_long
        if chan.recv_ready():
            out += chan.recv(1 << 16)
        elif chan.recv_stderr_ready():
            err += chan.recv_stderr(1 << 16)
        else:
            time.sleep(0.005)
    return CommandResult(chan.recv_exit_status(), bytes(out), bytes(err))


def upload(client: paramiko.SSHClient, start: Callable[[str], paramiko.Channel], sources: list[Path], remote: str,
           progress: Progress | None, label: str, try_sftp: bool = True) -> str:
    """Write the concatenated sources to `remote`; returns how (OVER_SFTP or OVER_EXEC).
    start(line) opens an exec channel running the sh line."""
    mode = sources[0].stat().st_mode & 0o777
    how = OVER_SFTP
    try:
        sftp = open_sftp(client) if try_sftp else None
        if sftp is None:
            how = OVER_EXEC
            put_exec(start(exec_upload_line(remote, mode)), sources, remote, progress, label)
            return how
        try:
            put_sftp(sftp, sources, remote, mode, progress)
        finally:
            sftp.close()
        return how
    except (OSError, EOFError, paramiko.SSHException) as exc:
        raise TransportError(f"upload of {remote} to {label} {how} failed: {exc}",
                             "check free space and permissions on the board") from exc
