"""Check board on the decode worker (app/work/check_worker.py), on the local runner with the NumPy backend: a check
asked for while a run decodes starts only once the run has ended (one thread, one board), each rung is signalled as
it is decided, and the worker's idle runner is closed before the ladder starts its own. The check here names an
interpreter the PC has not, so the ladder stops at identity (tests/app/board/test_device_panel.py climbs it whole)."""
from __future__ import annotations

from app.runs.clip import load_clip
from app.work.check_worker import CheckWorker
from app.work.decode_worker import TranscribeWorker, WorkerThread
from core.decode.options import DecodeOptions
from device.doctor.ladder import NAMES, STATUSES
from device.doctor.rungs_board import PYTHON_FIX
from device.link.profile import DeviceProfile
from tests.app.conftest import wait_for
from tests.conftest import AUDIO


def test_a_check_waits_for_the_run_before_it_and_signals_each_rung(qtbot, tmp_path):
    worker = TranscribeWorker()
    thread = WorkerThread(worker)
    checker = CheckWorker(worker)
    seen: list[tuple] = []
    worker.finished.connect(lambda run_id: seen.append(("run ended", run_id)))
    worker.failed.connect(lambda run_id, failure: seen.append(("run failed", failure.problem)))
    checker.rung.connect(lambda index, status: seen.append(("rung", NAMES[index], STATUSES[status])))
    checker.checked.connect(lambda report: seen.append(("checked", report)))
    checker.failed.connect(lambda failure: seen.append(("check failed", failure.problem)))
    try:
        clip = load_clip(AUDIO / "en_asterisk_hello-world.wav")
        worker.request_transcribe(1, clip.mels, DecodeOptions(language="en"), DeviceProfile.from_url(
                                  "local?backend=numpy"), n_frames=clip.n_frames)
        checker.start(DeviceProfile.from_url(f"local?backend=numpy&python={tmp_path / 'no-python'}"))
        assert checker.running
        wait_for(lambda: seen and seen[-1][0] in ("checked", "check failed"), "the check to end")
        assert not checker.running
        assert worker.decoder is None          # the run's runner was closed: the ladder starts its own
    finally:
        thread.stop()
    assert seen[0] == ("run ended", 1), seen[:3]
    rungs = [s[1:] for s in seen if s[0] == "rung"]
    assert rungs == [("reach", "pass"), ("identity", "fail")] + [(n, "not-run") for n in NAMES[2:]]
    assert seen[-1][0] == "checked"
    report = seen[-1][1]
    assert [(r["name"], r["status"]) for r in report["rungs"]] == rungs
    assert report["rungs"][1]["fix"] == PYTHON_FIX and "no-python" in report["lines"][1]
