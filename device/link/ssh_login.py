"""Logging in over SSH in the order OpenSSH's client uses, and each way it fails as one line.

"none" first: a development image (Yocto `debug-tweaks`, dropbear -B) lets root in with it, and any other server
answers with the methods it accepts. Then the key files (?key=, ~/.ssh/config's IdentityFile, else the default
files), the agent's keys not among them and a password; then an empty password, for a server that offers only
passwords. A method the server does not accept is not offered: each refusal counts against its MaxAuthTries.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator

import paramiko
from paramiko.auth_strategy import AuthStrategy
from paramiko.ssh_exception import BadAuthenticationType, NoValidConnectionsError

from core.errors import Fix, Setting
from device.link.transport import TransportError

KEY_TYPES = (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey)
AGENT = "the agent"
EMPTY = "an empty password"
KEY = Setting("key", "PATH", "pass")
AUTH_FIXES = ["check the user name", "put your public key in the board's ~/.ssh/authorized_keys", KEY]


class AuthError(TransportError):
    """The server answered and refused every login offered; a password may still let the user in."""
    code = "ssh_auth"


class TooManyAttempts(TransportError):
    """The server hung up after too many refusals. No AuthError: a password asked for next would come after the
    same keys, and be cut off the same way."""
    code = "ssh_auth"


def load_key(path: str) -> tuple[paramiko.PKey | None, str]:
    """The private key in `path`, or None and why it cannot be offered ("" when there is no such file)."""
    if not os.path.isfile(path):
        return None, ""
    for kind in KEY_TYPES:
        try:
            return kind.from_private_key_file(path), ""
        except paramiko.PasswordRequiredException:
            return None, "encrypted"
        except paramiko.SSHException:
            continue
        except OSError as exc:
            return None, exc.strerror or str(exc)
    return None, "not a private key"


def spoken(labels: list[str]) -> str:
    """What was offered, in order, the agent's keys counted in one place."""
    n = labels.count(AGENT)
    agent = "the agent's key" if n == 1 else f"the agent's {n} keys"
    return ", ".join(agent if x == AGENT else x for i, x in enumerate(labels) if x != AGENT or labels.index(x) == i)


class OpenSshOrder(AuthStrategy):
    """paramiko's hook for the login: offers each method in turn and keeps what happened for the failure line."""

    def __init__(self, user: str, identities: list[str], password: str | None, agent: bool):
        super().__init__(paramiko.SSHConfig())
        self.user, self.identities, self.password = user, identities, password
        self.agent = agent and bool(os.environ.get("SSH_AUTH_SOCK"))
        self.tried: list[str] = []
        self.unusable: dict[str, str] = {}          # key file -> why it was not offered
        self.accepts: list[str] | None = None       # the methods the server named after "none"
        self.unoffered: list[str] = []              # what the user has that was not offered
        self.agent_keys = 0
        self.dropped = False                        # the server closed the connection during the login

    def planned(self) -> str:
        """What a login would offer, before the host has answered (keys are read only once it has)."""
        files = [f"the key {p}" for p in self.identities if os.path.isfile(p)]
        return spoken(['"none"', *files, *([AGENT] if self.agent else []),
                       *(["a password"] if self.password else []), EMPTY])

    def _attempts(self, agent: paramiko.Agent | None) -> Iterator[tuple[str, str, Callable]]:
        # A stock Genio 520 EVK (IoT Yocto Rity 25.1.1) let root in with "none", no key or password
        # (bbudaedu/talkybuddy edge/BOARD_BRINGUP_DECISION.md).
        yield '"none"', "none", lambda t: t.auth_none(self.user)
        offered = set()
        for path in self.identities:
            key, why = load_key(path)
            if why:
                self.unusable[path] = why
            if key is not None and key.asbytes() not in offered:
                offered.add(key.asbytes())
                yield f"the key {path}", "publickey", lambda t, k=key: t.auth_publickey(self.user, k)
        for key in agent.get_keys() if agent else ():
            self.agent_keys += 1
            if key.asbytes() not in offered:         # a key file the agent also holds is offered once
                offered.add(key.asbytes())
                yield AGENT, "publickey", lambda t, k=key: t.auth_publickey(self.user, k)
        if self.password:
            yield "a password", "password", lambda t: t.auth_password(self.user, self.password)
        yield EMPTY, "password", lambda t: t.auth_password(self.user, "")

    def accepted(self, method: str) -> bool:
        """Whether the server takes `method`. paramiko sends a password as keyboard-interactive to a server that
        takes only that, as servers asking through PAM do."""
        return self.accepts is None or method in self.accepts or \
            (method == "password" and "keyboard-interactive" in self.accepts)

    def authenticate(self, transport: paramiko.Transport) -> None:
        try:
            agent = paramiko.Agent() if self.agent else None
        except (paramiko.SSHException, OSError):
            agent = None                            # an agent that does not answer is no agent
        try:
            for label, method, attempt in self._attempts(agent):
                if self.dropped or not self.accepted(method):
                    self.unoffered += [label] if label != EMPTY else []
                    continue
                try:
                    rest = attempt(transport)
                except BadAuthenticationType as exc:
                    rest = exc.allowed_types
                except (paramiko.SSHException, OSError, EOFError):
                    rest = None
                if transport.is_authenticated():
                    return
                self.tried.append(label)
                if rest:                            # a refusal naming the methods, or a partial success
                    self.accepts = list(rest)
                self.dropped = not transport.is_active()
        finally:
            if agent is not None:
                agent.close()
        raise paramiko.AuthenticationException(spoken(self.tried))

    def failure(self, label: str) -> TransportError:
        """The one line for a login that did not get in."""
        tried = spoken(self.tried)
        if self.dropped and len(self.tried) > 1:    # sshd does not count the first "none" against MaxAuthTries
            left = f"; not offered: {spoken(self.unoffered)}" if self.unoffered else ""
            return TooManyAttempts(f"{label} closed the connection after refusing {tried}: too many authentication "
                                   f"failures (the board's MaxAuthTries){left}",
                                   Fix(KEY, " with the key the board accepts (it is offered first), "
                                       "or raise MaxAuthTries in the board's sshd_config"))
        if self.dropped:
            return TransportError(f"{label} closed the connection during the login (tried {tried})",
                                  "check sshd's log on the board")
        if not (any(os.path.isfile(p) for p in self.identities) or self.agent_keys or self.password):
            return AuthError(f"no SSH key, agent or password to log in to {label}",
                             Fix("create a key with `ssh-keygen`, ", KEY, ", start ssh-agent, or use a password "
                                 f"(looked for {', '.join(self.identities)})"))
        accepts = f"; the board accepts only {', '.join(self.accepts)}" if self.accepts else ""
        accepts += f", not {spoken(self.unoffered)}" if self.unoffered else ""
        notes = "".join(f"; {p} is {why}" for p, why in self.unusable.items())
        locked = [p for p, why in self.unusable.items() if why == "encrypted"]
        fixes = ([f"load {', '.join(locked)} into ssh-agent with `ssh-add`"] if locked else []) + AUTH_FIXES
        if self.accepted("password"):
            fixes.append("use a password")
        fix = Fix(Fix.join(", ", fixes[:-1]), ", or ", fixes[-1])
        return AuthError(f"{label} refused authentication as {self.user!r} (tried {tried}){accepts}{notes}", fix)


def unreached(exc: Exception, host: str, port: int, timeout: float, planned: str) -> TransportError | None:
    """The network problem, named before any credential, when the host's SSH port never answered; else None."""
    before = f"; cannot connect, so no login was tried ({planned})"
    if isinstance(exc, socket.gaierror):
        return TransportError(f"cannot find the host {host!r}: the name does not resolve ({exc.strerror}){before}",
                              "check the host name, or give the board's IP address")
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return TransportError(f"{host} did not answer on port {port} within {timeout:.0f} s{before}",
                              "check the board is powered and on the network, and the address and port")
    if isinstance(exc, NoValidConnectionsError):
        exc = next(iter(exc.errors.values()))
    if isinstance(exc, OSError):
        return TransportError(f"cannot reach {host} on port {port}: {exc.strerror or exc}{before}",
                              "check the address and port, and that sshd runs on the board")
    return None
