"""The SSH login in OpenSSH's client's order, against real servers on 127.0.0.1.

"none" first, then the key files, the agent's other keys and a password, then an empty password: a tester whose
HOME holds a key and whose agent holds it still reaches a development image that lets root in with no password
(root's empty password exists only inside that sshd's private mount namespace, as in
test_ssh_empty_password.py). A server that hangs up after MaxAuthTries refusals is named as such.
"""
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import paramiko
import pytest

from device.link.ssh import AuthError, SshTransport
from device.link.ssh_login import TooManyAttempts
from device.link.transport import TransportError
from tests.device.link.test_ssh_empty_password import dev_image  # noqa: F401  (a development image's sshd)
from tests.device.link_helpers import NO_CONFIG
from tests.device.sshd import sshd_available, start_sshd

REPO = Path(__file__).resolve().parents[3]


def keygen(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True,
                   stdin=subprocess.DEVNULL)
    return path


@contextlib.contextmanager
def agent_holding(sock: Path, *keys: Path):
    """A running ssh-agent listening on `sock` that holds `keys`; killed on exit."""
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):              # the agent creates its socket just after start
            if sock.exists() or agent.poll() is not None:
                break
            time.sleep(0.05)
        env = {"SSH_AUTH_SOCK": str(sock), "PATH": os.environ["PATH"]}
        for key in keys:
            subprocess.run(["ssh-add", str(key)], env=env, check=True, capture_output=True)
        yield str(sock)
    finally:
        agent.kill()
        agent.wait()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME whose ~/.ssh holds a key no server here accepts."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    keygen(tmp_path / ".ssh" / "id_ed25519")
    return tmp_path


def record_logins(monkeypatch) -> list[tuple]:
    """Each login offered, in order: ("none",), ("publickey", its public blob) or ("password", the password)."""
    offered = []
    for name, said in (("auth_none", lambda: ()), ("auth_publickey", lambda k: (k.asbytes(),)),
                       ("auth_password", lambda p, *a: (p,))):
        real = getattr(paramiko.Transport, name)
        monkeypatch.setattr(paramiko.Transport, name, lambda self, user, *a, _real=real, _name=name, _said=said:
                            offered.append((_name[5:], *_said(*a))) or _real(self, user, *a))
    return offered


def test_device_info_reaches_a_passwordless_root_past_a_key_in_home_and_the_agent(dev_image, home):
    """The issue's case: a key in HOME that the board does not accept, an agent holding it, and root with no
    password. OpenSSH's client logs in with "none" before any key; so does the CLI."""
    dev_image.write_known_hosts(home / ".ssh" / "known_hosts")
    seen = len(dev_image.log())
    with agent_holding(home / "agent.sock", home / ".ssh" / "id_ed25519") as sock:
        url = f"ssh://root@127.0.0.1:{dev_image.port}"
        out = subprocess.run([sys.executable, "-m", "cli.main", "device-info", "--device", url], cwd=REPO,
                             capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, HOME=str(home), SSH_AUTH_SOCK=sock))
    assert out.returncode == 0, out.stderr
    facts = dict(line.split(None, 1) for line in out.stdout.splitlines() if len(line.split(None, 1)) == 2)
    assert facts["device"] == url and facts["runner_dir"] == "/root/whisperkv"
    log = dev_image.log()[seen:]
    assert "Accepted none for root" in log and "publickey" not in log     # the key was never offered


def test_the_order_is_none_the_key_files_the_agents_other_keys_a_password_then_an_empty_one(dev_image, home,
                                                                                              monkeypatch):
    """A user whose password is not empty, on a server that takes keys and passwords: every login is offered once,
    in OpenSSH's order; the key the agent also holds is offered once, from its file."""
    in_file = home / ".ssh" / "id_ed25519"
    only_agent = keygen(home / "agent_only")
    known = dev_image.write_known_hosts(home / "known_hosts")
    offered = record_logins(monkeypatch)
    with agent_holding(home / "agent.sock", in_file, only_agent) as sock:
        monkeypatch.setenv("SSH_AUTH_SOCK", sock)
        t = SshTransport("127.0.0.1", "nobody", dev_image.port, password="wrong", known_hosts=[str(known)],
                         config_path=NO_CONFIG, connect_timeout=30)
        with pytest.raises(AuthError) as err:
            t.run(["true"])
    blob = {p: paramiko.PKey.from_path(p).asbytes() for p in (in_file, only_agent)}
    assert offered == [("none",), ("publickey", blob[in_file]), ("publickey", blob[only_agent]),
                       ("password", "wrong"), ("password", "")]
    assert err.value.problem == (f"ssh://nobody@127.0.0.1:{dev_image.port} refused authentication as 'nobody' "
                                 f'(tried "none", the key {in_file}, the agent\'s key, a password, an empty password)'
                                 "; the board accepts only publickey, password")
    assert err.value.fix.endswith("pass ?key=PATH, or use a password")


@pytest.fixture
def strict_sshd(tmp_path):
    """A keys-only sshd that hangs up after one refused login (MaxAuthTries 1)."""
    if not sshd_available():
        pytest.skip("OpenSSH sshd is not installed (Debian: openssh-server)")
    server = start_sshd(tmp_path / "strict")
    config = server.workdir / "sshd_config"
    config.write_text(config.read_text() + "MaxAuthTries 1\n")
    server.restart()
    yield server
    server.stop()


def test_a_server_that_hangs_up_after_max_auth_tries_is_named_with_the_key_to_pass(strict_sshd, home, monkeypatch):
    ssh = home / ".ssh"
    for name in ("id_ecdsa", "id_rsa"):               # three default identity files, none authorised
        keygen(ssh / name)
    known = strict_sshd.write_known_hosts(home / "known_hosts")
    with agent_holding(home / "agent.sock", keygen(home / "agent_key")) as sock:
        monkeypatch.setenv("SSH_AUTH_SOCK", sock)
        t = SshTransport("127.0.0.1", strict_sshd.user, strict_sshd.port, known_hosts=[str(known)],
                         config_path=NO_CONFIG)
        with pytest.raises(TransportError) as err:
            t.run(["true"])
        assert isinstance(err.value, TooManyAttempts) and not isinstance(err.value, AuthError)
        label = f"ssh://{strict_sshd.user}@127.0.0.1:{strict_sshd.port}"
        assert err.value.problem == (f'{label} closed the connection after refusing "none", the key '
                                     f"{ssh / 'id_ed25519'}: too many authentication failures (the board's "
                                     f"MaxAuthTries); not offered: the key {ssh / 'id_ecdsa'}, the key "
                                     f"{ssh / 'id_rsa'}, the agent's key")
        assert "pass ?key=PATH" in err.value.fix and "MaxAuthTries" in err.value.fix
        assert "\n" not in str(err.value)
        # the fix: the key the board accepts, named in the URL, is offered before the agent's
        t = SshTransport("127.0.0.1", strict_sshd.user, strict_sshd.port, key=str(strict_sshd.user_key),
                         known_hosts=[str(known)], config_path=NO_CONFIG)
        assert t.run(["true"]).rc == 0
        t.close()
