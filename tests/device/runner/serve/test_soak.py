"""A runner that stays up: 300 requests in a row to one runner, locally and over a real loopback sshd,
with no memory growth after warm-up and no file descriptor leak; and a client that vanishes mid-stream
leaves the way clear for the next one (a runner serves one connection, so it must end, not decode on
for nobody holding the board's memory and cores)."""
import os
import time
from pathlib import Path

import numpy as np
import pytest

from core.decode.events import DoneEvent, TokenEvent
from core.decode.options import DecodeOptions
from device import protocol as P
from device.link.client import BoardClient
from device.link.connect import open_client, open_transport
from device.link.local import LocalTransport
from device.link.target import parse_target
from device.link.transport import LinkLost
from tests.device.link_helpers import NO_CONFIG, RawRunner, ssh_url
from tests.device.sshd import _descendants

REQUESTS = 300
FRESH_EVERY = 30      # every 30th request carries a mel never seen: the encoder runs, the cache evicts
WARM_UP = 90          # by then the encoder cache (3 windows' cross K/V at its default 128 MB) is full and has evicted
OPTIONS = DecodeOptions(language="en", max_tokens=2)


def runner_pids(root: int) -> set[int]:
    out = set()
    for pid in _descendants(root):
        try:
            if b"device.runner" in Path(f"/proc/{pid}/cmdline").read_bytes():
                out.add(pid)
        except OSError:
            pass
    return out


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def soak(client: BoardClient, pid: int, mel: np.ndarray) -> tuple[list[int], list[int]]:
    """REQUESTS requests on one connection; the runner's RSS and fd count after each one past warm-up."""
    rss, fds, tokens = [], [], None
    for i in range(REQUESTS):
        fresh = mel.copy()
        fresh[0, 0, 0] += 0.01 * (i // FRESH_EVERY + 1) if i % FRESH_EVERY == 0 else 0.0
        arrivals = list(client.transcribe(fresh, OPTIONS))
        done = arrivals[-1]
        assert done.final and isinstance(done.event, DoneEvent) and done.event.reason == "max_tokens"
        tokens = tokens or done.event.tokens
        assert done.event.tokens == tokens, i
        if i >= WARM_UP:
            rss.append(rss_kb(pid))
            fds.append(open_fds(pid))
    return rss, fds


def assert_steady(rss: list[int], fds: list[int]) -> None:
    assert max(rss) <= 1.05 * rss[0], f"runner RSS grew from {rss[0]} kB to {max(rss)} kB: {rss}"
    # medians: a file held open for a moment during a request is no leak, one more every 20 requests is
    start, end = sorted(fds[:20])[10], sorted(fds[-20:])[10]
    assert end <= start, f"runner fds went from {start} to {end}: {fds}"


def test_300_requests_to_a_local_runner(en_mel):
    before = runner_pids(os.getpid())
    with BoardClient(LocalTransport()) as client:
        (pid,) = runner_pids(os.getpid()) - before
        assert_steady(*soak(client, pid, en_mel))


def test_300_requests_to_a_runner_over_ssh(sshd, tmp_path, en_mel):
    kh = [str(sshd.write_known_hosts(tmp_path / "known_hosts"))]
    t = open_transport(ssh_url(sshd), known_hosts=kh, allow_agent=False, config_path=NO_CONFIG)
    before = runner_pids(sshd.proc.pid)
    try:
        with open_client(parse_target(ssh_url(sshd)), transport=t) as client:
            (pid,) = runner_pids(sshd.proc.pid) - before
            assert_steady(*soak(client, pid, en_mel))
    finally:
        t.close()


def gone_within(pids: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(Path(f"/proc/{p}").exists() for p in pids)


def decoding(mel: np.ndarray) -> RawRunner:
    """A local runner streaming the tokens of a long decode (EOT suppressed: on to the cache's 448 positions)."""
    r = RawRunner()
    r.request({"op": "hello", "protocol": P.PROTOCOL})
    r.until(lambda ev: ev["type"] == "hello")
    desc, payload = P.mel_to_payload(mel)
    r.request({"op": "transcribe", "id": "v1", "mel": desc, "language": "en", "suppress_eot": True,
               "max_tokens": 440}, payload)
    r.until(lambda ev: ev["type"] == "token")
    return r


def test_a_local_client_that_vanishes_mid_stream_ends_its_runner_and_the_next_one_serves(en_mel, local_run):
    r = decoding(en_mel)
    try:
        r.stream.proc.stdin.close()      # a host that dies closes both pipes at once, with no bye or cancel
        r.stream.proc.stdout.close()
        assert r.stream.proc.wait(timeout=30) == 0          # it stopped by itself: cancelled, not killed
    finally:
        r.close()
    with BoardClient(LocalTransport()) as again:
        assert list(again.transcribe(en_mel, DecodeOptions(language="en")))[-1].event.tokens == \
            local_run[-1].event.tokens


def test_a_runner_whose_output_breaks_mid_decode_stops_instead_of_decoding_for_nobody(en_mel):
    """Its stdout is its only way to answer: once that is gone it cancels and exits, though stdin stays open."""
    r = decoding(en_mel)
    try:
        r.stream.proc.stdout.close()
        assert r.stream.proc.wait(timeout=30) == 0
        assert "Traceback" not in r.stream.stderr_tail()
    finally:
        r.close()


def test_an_ssh_client_that_vanishes_mid_stream_ends_its_runner_and_a_reconnect_serves(sshd, tmp_path, en_mel,
                                                                                      local_run):
    kh = [str(sshd.write_known_hosts(tmp_path / "known_hosts"))]
    before = runner_pids(sshd.proc.pid)
    t = open_transport(ssh_url(sshd), known_hosts=kh, allow_agent=False, config_path=NO_CONFIG)
    client = open_client(parse_target(ssh_url(sshd)), transport=t)
    client.connect()
    mine = runner_pids(sshd.proc.pid) - before
    assert len(mine) == 1
    with pytest.raises(LinkLost):
        for arrival in client.transcribe(en_mel, {"language": "en", "suppress_eot": True, "max_tokens": 440}):
            if isinstance(arrival.event, TokenEvent):
                t.close()             # the whole SSH connection drops, with no bye or cancel
    assert gone_within(mine, 30), "the runner decodes on for a client that is gone"
    t2 = open_transport(ssh_url(sshd), known_hosts=kh, allow_agent=False, config_path=NO_CONFIG)
    try:
        with open_client(parse_target(ssh_url(sshd)), transport=t2) as again:
            assert list(again.transcribe(en_mel, DecodeOptions(language="en")))[-1].event.tokens == \
                local_run[-1].event.tokens
    finally:
        t2.close()
