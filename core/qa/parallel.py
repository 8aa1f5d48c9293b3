"""A suite on several devices at once: one worker thread per device, each with its own link or model.

How a device is opened is the caller's business: `start(stack)` returns (decode, clip_errors, meta) as
core.qa.run.run_suite takes them, registering on `stack` whatever must be closed afterwards."""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

from core.decode.window_choice import WindowRule
from core.errors import WhisperKVError
from core.qa.farm import DeviceRun
from core.qa.run import ClipResult, Decode, SuiteResult, run_suite
from core.qa.suite import Suite

Start = Callable[[ExitStack], tuple[Decode, tuple, dict]]


def run_on_device(device: str, start: Start, suite: Suite, cache: bool = True, timestamps: bool | None = None, *,
                  on_result: Callable[[int, ClipResult], None] | None = None, on_event=None,
                  should_stop: Callable[[], bool] = lambda: False, keep_errors: bool = False,
                  window: WindowRule = WindowRule()) -> DeviceRun:
    """The suite on one device. With keep_errors, a device that fails (unreachable, runner died) gives
    a DeviceRun with its error and the clips it finished; without, the error propagates."""
    done: list[ClipResult] = []
    meta: dict = {}

    def collect(i: int, r: ClipResult) -> None:
        done.append(r)
        if on_result is not None:
            on_result(i, r)

    try:
        with ExitStack() as stack:
            decode, clip_errors, meta = start(stack)
            result = run_suite(suite, decode, cache, timestamps, on_result=collect, on_event=on_event,
                               should_stop=should_stop, clip_errors=clip_errors, meta=meta, window=window)
    except Exception as exc:   # any failure of one board must not lose the other boards' results
        if not keep_errors:
            raise
        return DeviceRun(device, SuiteResult(suite.name, str(suite.path), done, dict(meta)), error=describe(exc))
    return DeviceRun(device, result)


def describe(exc: Exception) -> str:
    return str(exc) if isinstance(exc, WhisperKVError) else f"{type(exc).__name__}: {exc}"


def run_on_devices(suite: Suite, starts: dict[str, Start], cache: bool = True, timestamps: bool | None = None,
                   on_result: Callable[[str, int, ClipResult], None] | None = None,
                   window: WindowRule = WindowRule()) -> list[DeviceRun]:
    """Every device in parallel, results in the order of `starts`. on_result(device, index, result) is
    called from the workers' threads."""
    stop = threading.Event()

    def forward(device: str):
        return None if on_result is None else (lambda i, r: on_result(device, i, r))

    with ThreadPoolExecutor(max_workers=len(starts), thread_name_prefix="qa-device") as pool:
        futures = [pool.submit(run_on_device, device, start, suite, cache, timestamps, on_result=forward(device),
                               should_stop=stop.is_set, keep_errors=True, window=window)
                   for device, start in starts.items()]
        try:
            return [f.result() for f in futures]
        except KeyboardInterrupt:     # the workers stop after their current clip
            stop.set()
            raise
