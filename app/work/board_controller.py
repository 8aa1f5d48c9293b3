"""The device side of the window: the device panel's connect, test and deploy, run off the UI thread, and Check
board, run on the decode worker (app/work/check_worker.py): one job on the board at a time, a check refused while a
run or a stream decodes and a run refused while a check climbs, each with one line saying so; the status bar's
device line; Restart runner, the action the error dialog offers when the runner died or the
link dropped; and what the connected runner said of itself, which every run records."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from app.background import TaskRunner
from app.board.form_terms import in_form_terms
from app.board.panel import DevicePanel
from app.board.tasks import deploy, test_connection
from app.errors import RESTART_RUNNER, Failure
from app.views.board_cost import BoardCostLabel
from app.views.status_bar import StatusBar
from app.work.check_worker import CheckWorker
from app.work.decode_worker import TranscribeWorker
from core.model.device_words import machine_words
from device.link.profile import DeviceProfile


class BoardController(QObject):
    connected = Signal(dict)       # the runner's hello summary
    failed = Signal(object)        # Failure of a test or a deploy

    def __init__(self, panel: DevicePanel, status: StatusBar, worker: TranscribeWorker, tasks: TaskRunner,
                 parent=None, decoding: Callable[[], str] = lambda: ""):
        super().__init__(parent)
        self.panel, self.status, self.worker, self.tasks = panel, status, worker, tasks
        self.decoding = decoding   # what decodes on the worker now, in words ("run #3"), "" when nothing
        self.checker = CheckWorker(worker)
        self.runner: dict = {}     # the connected runner's hello summary
        self.info: dict = {}       # the last device-info of the connected profile
        self.checked: dict = {}    # the last Check board report (the doctor's, device/doctor/ladder.py)
        self.checking_url = ""
        # doctor.html goes where the last export went: the window's settings (kept between launches), if it has them
        panel.check_view.settings = getattr(parent, "settings", None)
        panel.connectRequested.connect(self.connect_device)
        panel.testRequested.connect(self.test_device)
        panel.deployRequested.connect(self.deploy_device)
        panel.checkRequested.connect(self.check_device)
        worker.connected.connect(self._on_connected)
        worker.failed.connect(self._on_worker_failed)
        self.cost = BoardCostLabel()      # beside the run: the SoC, then what each second of it costs the board
        status.addPermanentWidget(self.cost)
        worker.samples.connect(self.cost.show_sample)
        # The checker's signals come from the decode worker's thread: each goes to a method of this object, never to
        # a lambda, which PySide calls on the sender's thread (local .ci/run runs crashed with one writing the panel).
        self.checker.rung.connect(self._on_rung)
        self.checker.checked.connect(self._on_checked)
        self.checker.failed.connect(self._on_check_failed)

    def run_info(self) -> dict:
        """What a run records of its device: the device-info and the runner's hello."""
        return {**self.info, **self.runner}

    def connect_device(self, profile: DeviceProfile, password: str = "") -> None:
        self.status.show_device(profile.url(), "connecting…")
        self.worker.request_connect(profile, password)

    def _on_connected(self, summary: dict) -> None:
        self.runner = summary
        profile = self.worker.profile or DeviceProfile()
        self.status.show_device(profile.url(), "connected", summary)
        self.cost.show_soc(summary.get("soc"), machine_words({"device": profile.url(), **summary}))
        self.connected.emit(summary)

    def _on_worker_failed(self, run_id: int, failure: Failure) -> None:
        url = (self.worker.profile or DeviceProfile()).url()
        if run_id == 0:  # connecting failed (the run controller shows every worker failure)
            self.status.show_device(url, "not connected")
        elif failure.action == RESTART_RUNNER:
            self.runner = {}
            self.status.show_device(url, "runner lost: the next run reconnects")

    def act(self, action: str) -> None:
        """An action button of the error dialog."""
        if action == RESTART_RUNNER:
            self.restart_runner()

    def restart_runner(self) -> None:
        """Start the runner of the panel's device again, off the UI thread; the runs so far stay as they are."""
        profile = self.panel.profile()
        self.status.show_device(profile.url(), "restarting the runner…")
        self.worker.request_restart(profile, self.panel.password.text())

    def test_device(self, profile: DeviceProfile, password: str = "") -> None:
        self.panel.set_busy(True)
        self.panel.show_info({"testing": profile.url()})
        self.tasks.start(test_connection, profile, password, on_done=self._on_tested, on_failed=self._on_failed)

    def _on_tested(self, info: dict) -> None:
        self.panel.set_busy(False)
        self.info = info
        self.panel.show_info(info)

    def deploy_device(self, profile: DeviceProfile, password: str = "") -> None:
        self.panel.set_busy(True)
        self.panel.show_progress(0, 1)
        self.tasks.start(deploy, profile, password, on_done=self._on_deployed, on_failed=self._on_failed,
                         on_progress=self.panel.show_progress)

    def _on_deployed(self, result: dict) -> None:
        self.panel.set_busy(False)
        self.panel.show_info(result)
        self.status.showMessage("Deploy finished", 5000)

    def check_device(self, profile: DeviceProfile, password: str = "") -> None:
        """Climb the doctor's ladder on the decode worker; refused, with one line, while a run or a stream decodes."""
        busy = self.decoding()
        if busy:
            line = f"Check board refused: {busy} on the board; stop it or let it end, then press Check board again"
            self.panel.show_lines([line])
            self.status.showMessage(line, 10000)
            return
        self.panel.set_busy(True)
        self.panel.begin_check(profile.url())
        self.runner, self.checking_url = {}, profile.url()
        self.status.show_device(profile.url(), "checking the board…")
        self.checker.start(profile, password)

    def busy(self) -> str:
        """What holds the board now, in words ("" when nothing)."""
        return "Check board is using the board" if self.checker.running else ""

    def refuses(self, what: str) -> bool:
        """A run or a stream asked for while the check climbs: refused, with one line in the status bar."""
        busy = self.busy()
        if busy:
            self.status.showMessage(f"{what} refused: {busy}; try again when the check ends", 10000)
        return bool(busy)

    def close(self) -> None:
        self.checker.abandon()

    @Slot(int, int)
    def _on_rung(self, index: int, status: int) -> None:
        self.panel.show_rung(index, status)

    def _on_checked(self, report: dict) -> None:
        self.panel.set_busy(False)
        self.status.show_device(self.checking_url, "checked; the next run starts the runner")
        self.checked = report
        self.panel.show_check(report)
        failed = next((r["name"] for r in report["rungs"] if r["status"] == "fail"), None)
        self.status.showMessage(f"Check board: stopped at {failed}" if failed else "Check board: no rung failed", 5000)

    def _on_check_failed(self, failure: Failure) -> None:
        self.status.show_device(self.checking_url, "not connected")
        self._on_failed(failure)

    def _on_failed(self, failure: Failure) -> None:
        failure = in_form_terms(failure)
        self.panel.set_busy(False)
        self.panel.show_info({"failed": failure.problem})
        self.failed.emit(failure)


def decoding_now(runs, live_worker) -> str:
    """What decodes on the decode worker now, in words ("" when nothing): Check board waits for none of it."""
    if runs.active is not None:
        return f"run #{runs.active.id} is decoding"
    return "a live stream is running" if live_worker.running else ""
