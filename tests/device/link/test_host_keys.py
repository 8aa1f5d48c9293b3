"""A board whose host key changes after known_hosts recorded it: a real sshd comes back on the same port with
a freshly generated key, as a reflashed board (or a man-in-the-middle) would, and the connection is refused."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from device.link.ssh import HostKeyError
from tests.device.link.test_ssh import host_fingerprint, transport
from tests.device.link_helpers import ssh_url
from tests.device.sshd import start_sshd


@pytest.fixture
def reflashed(tmp_path):
    """(server, known_hosts path, old fingerprint): known_hosts holds the key the server had before its restart."""
    server = start_sshd(tmp_path / "board")
    try:
        kh = server.write_known_hosts(tmp_path / "known_hosts")
        t = transport(server, [str(kh)])
        assert t.run(["true"]).rc == 0            # the recorded key was accepted
        t.close()
        old = host_fingerprint(server)
        server.restart(new_host_key=True)
        assert host_fingerprint(server) != old
        yield server, kh, old
    finally:
        server.stop()


def test_a_changed_host_key_is_refused_and_explained(reflashed):
    server, kh, old = reflashed
    with pytest.raises(HostKeyError) as err:
        transport(server, [str(kh)]).run(["true"])
    problem, fix = err.value.problem, err.value.fix
    assert "CHANGED" in problem and "unknown" not in problem
    assert old in problem and host_fingerprint(server) in problem and str(kh) in problem
    assert "man-in-the-middle" in problem and "reflashed" in problem
    assert f"ssh-keygen -R '[127.0.0.1]:{server.port}' -f {kh}" in fix
    assert err.value.known_hosts_line is None        # nothing is offered to trust


def test_trusting_the_new_fingerprint_does_not_override_a_changed_key(reflashed):
    server, kh, _ = reflashed
    with pytest.raises(HostKeyError, match="CHANGED"):
        transport(server, [str(kh)], trust_host_key=host_fingerprint(server)).run(["true"])


def test_following_the_fix_reaches_the_board_again(reflashed):
    server, kh, _ = reflashed
    subprocess.run(["ssh-keygen", "-R", f"[127.0.0.1]:{server.port}", "-f", str(kh)], check=True,
                   capture_output=True)
    with pytest.raises(HostKeyError, match="unknown"):
        transport(server, [str(kh)]).run(["true"])
    server.write_known_hosts(kh)
    t = transport(server, [str(kh)])
    assert t.run(["true"]).rc == 0
    t.close()


def test_the_cli_refuses_a_changed_key_in_one_line(reflashed, tmp_path):
    server, kh, _ = reflashed
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "known_hosts").write_text(kh.read_text())     # the user's own known_hosts, as ssh keeps it
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"} | {"HOME": str(home)}
    p = subprocess.run([sys.executable, "-m", "cli", "device-info", "--device", ssh_url(server)], env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "CHANGED" in p.stderr and "ssh-keygen -R" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
