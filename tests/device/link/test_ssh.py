"""SshTransport against a real OpenSSH sshd on 127.0.0.1 (started by the `sshd` fixture)."""
import subprocess
import time

import pytest

from core.decode.events import EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from device.link.connect import open_client, open_transport
from device.link.ssh import AuthError, HostKeyError, SshTransport
from device.link.target import parse_target
from device.link.transport import LinkLost, TransportError
from device.runner.backends import REGISTRY
from tests.device.link_helpers import NO_CONFIG, assert_streamed, ssh_url
from tests.device.sshd import start_sshd


def host_fingerprint(server) -> str:
    out = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", str(server.workdir / "host_key.pub")],
                         capture_output=True, text=True, check=True).stdout
    return out.split()[1]


@pytest.fixture
def known_hosts(sshd, tmp_path):
    return [str(sshd.write_known_hosts(tmp_path / "known_hosts"))]


def transport(server, known, **kw):
    return open_transport(ssh_url(server), known_hosts=known, allow_agent=False, config_path=NO_CONFIG, **kw)


def test_tokens_over_ssh_equal_local_and_stream_live(sshd, known_hosts, local_run, en_mel):
    t = transport(sshd, known_hosts)
    with open_client(parse_target(ssh_url(sshd)), transport=t) as client:
        assert client.info.model_sha256 and client.info.backend in REGISTRY
        arrivals = list(client.transcribe(en_mel, DecodeOptions(language="en")))
    t.close()
    assert_streamed(arrivals)
    assert arrivals[-1].event.tokens == local_run[-1].event.tokens
    def steps(run):
        return [(a.event.token, a.event.cache_len) for a in run if isinstance(a.event, TokenEvent)]
    assert steps(arrivals) == steps(local_run)


def test_unknown_host_key_is_rejected_with_its_fingerprint(sshd, tmp_path):
    empty = tmp_path / "empty_known_hosts"
    empty.touch()
    with pytest.raises(HostKeyError) as err:
        transport(sshd, [str(empty)]).run(["true"])
    fp = host_fingerprint(sshd)
    msg = str(err.value)
    assert "unknown" in msg and fp in msg and f"--trust-host-key {fp}" in msg
    assert f"ssh-keyscan -p {sshd.port} 127.0.0.1" in msg


def test_explicitly_trusted_fingerprint_is_accepted(sshd, tmp_path):
    t = transport(sshd, [], trust_host_key=host_fingerprint(sshd))
    assert t.run(["true"]).rc == 0
    t.close()
    with pytest.raises(HostKeyError, match="not the trusted"):
        transport(sshd, [], trust_host_key="SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").run(["true"])


def test_changed_host_key_is_refused(sshd, tmp_path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    other = " ".join((tmp_path / "other.pub").read_text().split()[:2])
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[127.0.0.1]:{sshd.port} {other}\n")
    with pytest.raises(HostKeyError, match="CHANGED"):
        transport(sshd, [str(kh)], trust_host_key=host_fingerprint(sshd)).run(["true"])


def test_wrong_key_is_refused_clearly(sshd, known_hosts, tmp_path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "stranger")], check=True)
    t = SshTransport("127.0.0.1", sshd.user, sshd.port, key=str(tmp_path / "stranger"), known_hosts=known_hosts,
                     allow_agent=False, config_path=str(tmp_path / "no_config"))
    with pytest.raises(AuthError) as err:
        t.run(["true"])
    assert "refused authentication" in str(err.value) and "stranger" in str(err.value)
    assert "authorized_keys" in err.value.fix


def test_ssh_config_alias_and_hashed_known_hosts(sshd, tmp_path):
    kh = sshd.write_known_hosts(tmp_path / "known_hosts")
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(kh)], check=True, capture_output=True)
    assert "127.0.0.1" not in kh.read_text()            # hashed [host]:port entry
    cfg = tmp_path / "config"
    cfg.write_text(f"Host board\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
                   f"  IdentityFile {sshd.user_key}\n  UserKnownHostsFile {kh}\n")
    t = SshTransport("board", config_path=str(cfg), allow_agent=False)
    assert t.label == f"ssh://{sshd.user}@127.0.0.1:{sshd.port}"
    res = t.run(["printf", "%s|", "two words", "$HOME", "; true"])
    assert res.rc == 0 and res.text == "two words|$HOME|; true|"   # shlex-quoted, nothing expanded
    assert t.run(["pwd"], cwd="~").text.strip() == t.home()
    t.close()


def test_sshd_killed_mid_stream_keeps_partial_events(tmp_path, en_mel):
    server = start_sshd(tmp_path / "doomed")
    try:
        kh = [str(server.write_known_hosts(tmp_path / "kh"))]
        t = open_transport(ssh_url(server), known_hosts=kh, allow_agent=False, config_path=NO_CONFIG,
                           keepalive=1)
        client = open_client(parse_target(ssh_url(server)), transport=t, read_timeout=30)
        with pytest.raises(LinkLost) as err:
            for a in client.transcribe(en_mel, DecodeOptions(language="en")):
                if isinstance(a.event, TokenEvent):
                    server.kill_all()
        got = err.value.received
        assert isinstance(got[0].event, EncodedEvent) and isinstance(got[1].event, TokenEvent)
        assert "ssh://" in str(err.value) and "received so far are kept" in err.value.fix
        client.close()
        t.close()
    finally:
        server.stop()


def test_remote_python_is_configurable(sshd, known_hosts):
    t = open_transport(ssh_url(sshd, python="/nonexistent/python3"), known_hosts=known_hosts, allow_agent=False,
                       config_path=NO_CONFIG)
    with pytest.raises(LinkLost, match="nonexistent"):
        open_client(parse_target(ssh_url(sshd)), transport=t, connect_timeout=30).connect()
    t.close()


def test_login_through_the_ssh_agent(sshd, known_hosts, tmp_path, monkeypatch):
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):              # the agent creates its socket just after start
            if sock.exists() or agent.poll() is not None:
                break
            time.sleep(0.05)
        env = {"SSH_AUTH_SOCK": str(sock), "PATH": "/usr/bin:/bin"}
        subprocess.run(["ssh-add", str(sshd.user_key)], env=env, check=True, capture_output=True)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        monkeypatch.setenv("HOME", str(tmp_path))           # no default identity files to fall back on
        t = SshTransport("127.0.0.1", sshd.user, sshd.port, known_hosts=known_hosts,
                         config_path=str(tmp_path / "none"))
        assert t.run(["true"]).rc == 0
        t.close()
    finally:
        agent.kill()
        agent.wait()


def test_nothing_listening_is_a_clear_error(known_hosts, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # closed again before the connect
    t = SshTransport("127.0.0.1", "root", port, key=str(tmp_path / "k"), known_hosts=known_hosts,
                     allow_agent=False, config_path=str(tmp_path / "none"), connect_timeout=5)
    (tmp_path / "k").write_text("not a key")
    with pytest.raises(TransportError, match=f"cannot reach 127.0.0.1 on port {port}") as err:
        t.run(["true"])
    assert not isinstance(err.value, AuthError) and "sshd runs on the board" in err.value.fix
    assert f'no login was tried ("none", the key {tmp_path / "k"}, an empty password)' in err.value.problem


def test_a_password_for_a_keys_only_server_is_not_sent_and_the_line_says_why(sshd, known_hosts, tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))                # no default identity files either
    t = SshTransport("127.0.0.1", sshd.user, sshd.port, password="not-the-password", known_hosts=known_hosts,
                     allow_agent=False, config_path=NO_CONFIG)
    with pytest.raises(AuthError, match=r'tried "none"\); the board accepts only publickey, not a password') as err:
        t.run(["true"])
    assert "use a password" not in err.value.fix and "authorized_keys" in err.value.fix


def test_no_credentials_at_all_is_named_once_the_host_answers(sshd, known_hosts, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    t = SshTransport("127.0.0.1", "root", sshd.port, known_hosts=known_hosts, allow_agent=False, config_path=NO_CONFIG)
    with pytest.raises(AuthError, match="no SSH key, agent or password") as err:
        t.run(["true"])
    assert "ssh-keygen" in err.value.fix


def test_an_unreachable_host_without_keys_names_the_network_first(tmp_path, monkeypatch):
    """No key and nothing listening: the network is the problem to fix first, not the keys."""
    import socket

    monkeypatch.setenv("HOME", str(tmp_path))
    with socket.socket() as s:                          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = SshTransport("127.0.0.1", "root", port, allow_agent=False, config_path=NO_CONFIG)
    with pytest.raises(TransportError) as err:
        t.run(["true"])
    assert not isinstance(err.value, AuthError)
    assert f"cannot reach 127.0.0.1 on port {port}" in err.value.problem and "refused" in err.value.problem.lower()
    assert "key" not in str(err.value).lower()
    t = SshTransport("no-such-board.invalid", "root", 22, allow_agent=False, config_path=NO_CONFIG)
    with pytest.raises(TransportError, match="does not resolve"):
        t.run(["true"])
