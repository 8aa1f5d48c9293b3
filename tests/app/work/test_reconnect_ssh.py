"""A lost SSH link in the studio, against a real sshd on loopback: the server (and the runner with it) is
killed mid-run. The next run reconnects by itself, retrying with a short backoff on the worker thread; when
the board stays away it gives up with a clear error that offers Restart runner."""
from __future__ import annotations

import sys
import threading
import time
from urllib.parse import urlencode

import pytest

from app.board.reconnect import BACKOFF_S
from app.errors import RESTART_RUNNER
from app.work.decode_worker import TranscribeWorker
from device.link.connect import open_transport
from device.link.profile import DeviceProfile
from device.runner.serve.agent import ROOT
from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait, wait_for
from tests.app.work.dialogs import open_error_dialog, restart_button
from tests.app.work.dying import DiesOnce
from tests.device.link_helpers import NO_CONFIG
from tests.device.sshd import start_sshd


@pytest.fixture
def board(tmp_path):
    server = start_sshd(tmp_path / "sshd")
    yield server
    server.stop()


@pytest.fixture
def window(qtbot, tmp_path, board):
    """The studio on the loopback board, after a first run whose link dropped at step 2."""
    kh = board.write_known_hosts(tmp_path / "known_hosts")
    factory = DiesOnce(lambda profile: open_transport(profile.url(), known_hosts=[str(kh)], allow_agent=False,
                                                      config_path=NO_CONFIG, keepalive=1),
                       lambda client: board.kill_all(), read_timeout=30)
    w = make_window(settings_file(tmp_path / "app.ini"), worker=TranscribeWorker(decoder_factory=factory))
    qtbot.addWidget(w)
    w.factory, w.shown = factory, []
    w.failureShown.connect(w.shown.append)
    w.device.show_profile(DeviceProfile.from_url(f"ssh://{board.user}@127.0.0.1:{board.port}?" + urlencode(
        {"key": board.user_key, "python": sys.executable, "dir": ROOT}), "loopback"))
    open_and_wait(w, "test_en.wav")
    lost = transcribe_and_wait(w, language="en")
    assert lost.stop_reason == "error" and lost.rows and w.shown[-1].code == "link_lost"
    assert w.shown[-1].action == RESTART_RUNNER
    assert restart_button(w) is not None
    open_error_dialog(w).close()
    return w


def run_once(window):
    """Start a run; (the run, when transcribe() returned on the UI thread)."""
    finished = []
    window.runFinished.connect(finished.append)
    run = window.transcribe()
    returned = time.monotonic()
    wait_for(lambda: finished, "the run to end")
    window.runFinished.disconnect(finished.append)
    return run, returned


def test_the_next_run_reconnects_with_a_backoff(window, board):
    before = len(window.factory.calls)
    back = threading.Timer(1.2, board.restart)      # the board is back after 1.2 s: a later attempt gets in
    back.start()
    run, returned = run_once(window)
    back.join()
    assert run.error is None and run.stop_reason == "eot", run.error
    attempts = window.factory.calls[before:]
    # The first two attempts (0 s, 0.5 s) meet a dead board; which later one gets in depends on how fast
    # sshd comes back on a loaded machine.
    assert 3 <= len(attempts) <= len(BACKOFF_S) + 1, attempts
    gaps = [b - a for a, b in zip(attempts, attempts[1:])]
    assert all(gap >= delay - 0.05 for gap, delay in zip(gaps, BACKOFF_S)), gaps
    assert returned < attempts[1]                    # the UI thread was free while the worker waited
    assert "(connected)" in window.status.device.text()


def test_a_board_that_stays_away_gives_up_clearly_then_restarts(window, board):
    before = len(window.factory.calls)
    run, _ = run_once(window)
    failure = window.shown[-1]
    assert run.stop_reason == "error" and failure.code == "reconnect_failed"
    assert f"{len(BACKOFF_S) + 1} attempts" in failure.problem and "cannot connect" in failure.problem
    assert "sshd runs on the board" in failure.fix and failure.action == RESTART_RUNNER
    attempts = window.factory.calls[before:]
    gaps = [b - a for a, b in zip(attempts, attempts[1:])]
    assert len(gaps) == len(BACKOFF_S) and all(d - 0.05 <= g < d + 2.0 for g, d in zip(gaps, BACKOFF_S)), gaps

    board.restart()
    connected = []
    window.board.connected.connect(connected.append)
    restart_button(window).click()
    wait_for(lambda: connected, "the restarted runner's hello")
    assert "(connected)" in window.status.device.text()
