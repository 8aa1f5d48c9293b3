"""Check board on the decode worker: the doctor's ladder (app/board/check.py) climbed on the thread of the worker
that owns the board connection and runs transcriptions, so that a check and a run never use the board at once and
the window never waits. Each rung is signalled as it is decided, the report at the end.

The ladder starts a runner of its own (its loads rung times the graphs' load, and it runs the Neuron profiler for
the placement rung when the profile's NPU profile setting is on), so the worker's idle runner is closed first; the
next run starts it again."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from app.board.check import board_checkup, check_board
from app.board.form_terms import in_form_terms
from app.errors import failure_of
from app.work.decode_worker import TranscribeWorker
from device.doctor.ladder import release
from device.link.profile import DeviceProfile


class CheckWorker(QObject):
    rung = Signal(int, int)        # the rung's index in the ladder and its status's (device/doctor/ladder.py)
    checked = Signal(dict)         # the doctor's report and its lines
    failed = Signal(object)        # Failure: the check itself could not run
    _start_requested = Signal(object, str)

    def __init__(self, transcriber: TranscribeWorker):
        super().__init__()
        self.transcriber = transcriber
        self.running = False       # set on the UI thread at start, cleared on the worker's before the answer
        self._checkup = None
        self._abandoned = False
        self.moveToThread(transcriber.thread())     # queued behind a run's requests, never beside them
        self._start_requested.connect(self._check)

    # --- called from the UI thread ----------------------------------------------------------------
    def start(self, profile: DeviceProfile, password: str = "") -> None:
        self.running, self._abandoned = True, False
        self._start_requested.emit(profile, password)

    def abandon(self) -> None:
        """Closing the window: end the check where it is (its link closed), with no answer."""
        self._abandoned = True
        checkup = self._checkup
        if checkup is not None:
            release(checkup)

    # --- on the worker thread ---------------------------------------------------------------------
    @Slot(object, str)
    def _check(self, profile: DeviceProfile, password: str) -> None:
        self._checkup = board_checkup(profile, password)   # before reading the flag: abandon() reads it after
        if self._abandoned:
            self._checkup, self.running = None, False
            return
        self.transcriber.close()
        report, failure = None, None
        try:
            report = check_board(self._checkup, self.rung.emit)
        except Exception as exc:
            failure = in_form_terms(failure_of(exc))
        finally:
            self._checkup, self.running = None, False
        if self._abandoned:
            return
        if failure is not None:
            self.failed.emit(failure)
        else:
            self.checked.emit(report)
