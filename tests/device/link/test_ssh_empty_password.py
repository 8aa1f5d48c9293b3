"""Logging in as a development image allows: root with an empty password, no key, agent or password given.

The servers are a real OpenSSH sshd on 127.0.0.1 configured as a Yocto `debug-tweaks` image is
(`PermitEmptyPasswords yes`, `PasswordAuthentication yes`, `PermitRootLogin yes`, root's password empty), and a
real dropbear with `-B` (blank passwords allowed), the SSH server of many Yocto images. Root's empty password
exists only inside each server's private mount namespace; the machine's /etc/shadow is checked unchanged after.
"""
import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

import paramiko
import pytest

from device.link.ssh import AuthError, SshTransport
from tests.device.link_helpers import NO_CONFIG, sshd  # noqa: F401  (sshd: the keys-only OpenSSH server)
from tests.device.sshd import dropbear_available, empty_root_available, start_dropbear, start_sshd

REPO = Path(__file__).resolve().parents[3]


def shadow_digest() -> str:
    return hashlib.sha256(Path("/etc/shadow").read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def dev_image(tmp_path_factory):
    if not empty_root_available():
        pytest.skip("needs root, unshare and OpenSSH sshd (a private mount namespace holds root's empty password)")
    before = shadow_digest()
    server = start_sshd(tmp_path_factory.mktemp("sshd-dev"), empty_root=True)
    yield server
    server.stop()
    assert shadow_digest() == before, "the machine's /etc/shadow changed"


@pytest.fixture(scope="module")
def dropbear(tmp_path_factory):
    if not (empty_root_available() and dropbear_available()):
        pytest.skip("needs root, unshare and dropbear (Debian: dropbear-bin)")
    before = shadow_digest()
    server = start_dropbear(tmp_path_factory.mktemp("dropbear-dev"))
    yield server
    server.stop()
    assert shadow_digest() == before, "the machine's /etc/shadow changed"


@pytest.fixture
def home(tmp_path, monkeypatch, dev_image):
    """A user with no identity file and no agent, who trusts the board's host key."""
    (tmp_path / ".ssh").mkdir()
    dev_image.write_known_hosts(tmp_path / ".ssh" / "known_hosts")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return tmp_path


def test_root_with_an_empty_password_is_only_inside_the_servers_namespace(dev_image):
    root = next(ln for ln in Path("/etc/shadow").read_text().splitlines() if ln.startswith("root:"))
    assert root.split(":")[1] != ""                                   # the machine's root keeps its password field
    assert (dev_image.workdir / "shadow").read_text().startswith("root::")


def test_no_credentials_logs_in_with_the_none_method(dev_image, home):
    t = SshTransport("127.0.0.1", "root", dev_image.port, allow_agent=False, config_path=NO_CONFIG)
    result = t.run(["id", "-un"])
    t.close()
    assert result.rc == 0 and result.stdout.strip() == b"root"
    assert "Accepted none for root" in dev_image.log()


def test_dropbear_with_blank_passwords_lets_root_in_with_none(dropbear, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    known = dropbear.write_known_hosts(tmp_path / "known_hosts")
    t = SshTransport("127.0.0.1", "root", dropbear.port, known_hosts=[str(known)], allow_agent=False,
                     config_path=NO_CONFIG)
    result = t.run(["id", "-un"])
    t.close()
    assert result.rc == 0 and result.stdout.strip() == b"root"
    assert "Auth succeeded with blank password for 'root'" in dropbear.log()


def test_device_info_reaches_a_board_that_lets_root_in_without_a_password(dev_image, home):
    """What the user types: no key, no agent, no ?python=; the facts printed are this machine's (the board here)."""
    url = f"ssh://root@127.0.0.1:{dev_image.port}"
    out = subprocess.run([sys.executable, "-m", "cli.main", "device-info", "--device", url], cwd=REPO,
                         capture_output=True, text=True, timeout=300, env=dict(os.environ, HOME=str(home)))
    assert out.returncode == 0, out.stderr
    facts = dict(line.split(None, 1) for line in out.stdout.splitlines() if len(line.split(None, 1)) == 2)
    assert facts["device"] == url
    assert facts["kernel"] == platform.release() and facts["arch"] == platform.machine()
    assert facts["cpu_count"] == str(os.cpu_count())
    assert facts["runner_dir"] == "/root/whisperkv"                  # root's home: it logged in as root


def test_a_server_that_refuses_none_and_empty_passwords_keeps_the_credentials_line(sshd, tmp_path, monkeypatch):
    """A normal sshd (keys only): "none" is tried and refused; the empty password is not sent, since the server
    does not take passwords (a refusal counts against its MaxAuthTries); the line names keys, agent and the fix."""
    monkeypatch.setenv("HOME", str(tmp_path))
    tried = []
    for name in ("auth_none", "auth_password"):
        real = getattr(paramiko.Transport, name)
        monkeypatch.setattr(paramiko.Transport, name,
                            lambda self, *a, _real=real, _name=name: tried.append((_name, *a)) or _real(self, *a))
    known = sshd.write_known_hosts(tmp_path / "known_hosts")
    t = SshTransport("127.0.0.1", "root", sshd.port, known_hosts=[str(known)], allow_agent=False,
                     config_path=NO_CONFIG)
    with pytest.raises(AuthError) as err:
        t.run(["true"])
    assert err.value.problem == f"no SSH key, agent or password to log in to ssh://root@127.0.0.1:{sshd.port}"
    assert "ssh-keygen" in err.value.fix and "?key=PATH" in err.value.fix
    assert tried == [("auth_none", "root")]

