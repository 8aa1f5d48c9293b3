"""A suite on several devices at once: one worker per device; a device that fails keeps its clips so far."""
import threading

import pytest

from core.errors import WhisperKVError
from core.qa.parallel import run_on_device, run_on_devices
from tests.core.qa.qa_helpers import fake_events, hello_suite


def device(closed: list, name: str, die_at: int | None = None, barrier: threading.Barrier | None = None):
    """A start(stack) whose decoder answers "hello world", or raises at clip `die_at` (the runner died)."""
    def start(stack):
        stack.callback(closed.append, name)
        calls = []

        def decode(mels, options, n_frames):
            calls.append(1)
            if barrier is not None:
                barrier.wait(timeout=60)     # both devices are inside a decode at once, or this breaks
            if die_at is not None and len(calls) > die_at:
                raise WhisperKVError(f"the link to {name} was lost", "check the board")
            return fake_events([1, 2], " hello world", "eot")

        return decode, (), {"device": name}
    return start


def test_devices_run_at_once_and_each_keeps_its_own_results(tmp_path):
    suite = hello_suite(tmp_path, names=("a", "b"))
    closed, seen = [], []
    barrier = threading.Barrier(2)
    runs = run_on_devices(suite, {"local": device(closed, "local", barrier=barrier),
                                  "ssh://board": device(closed, "ssh://board", barrier=barrier)},
                          on_result=lambda d, i, r: seen.append((d, i, r.name)))
    assert [r.device for r in runs] == ["local", "ssh://board"]
    assert all(r.passed and not r.error and len(r.result.results) == 2 for r in runs)
    assert runs[1].result.meta == {"device": "ssh://board"}
    assert sorted(seen) == [("local", 0, "a"), ("local", 1, "b"), ("ssh://board", 0, "a"), ("ssh://board", 1, "b")]
    assert sorted(closed) == ["local", "ssh://board"]


def test_a_device_that_dies_or_never_answers_fails_alone(tmp_path):
    suite = hello_suite(tmp_path, names=("a", "b"))
    closed = []

    def unreachable(stack):
        raise WhisperKVError("cannot reach 10.0.0.9:22", "check the address")

    def broken(stack):
        raise RuntimeError("a bug")

    runs = run_on_devices(suite, {"local": device(closed, "local"), "ssh://dies": device(closed, "dies", die_at=1),
                                  "ssh://gone": unreachable, "adb://x": broken})
    ok, dies, gone, bug = runs
    assert ok.passed and [r.name for r in ok.result.results] == ["a", "b"]
    assert not dies.passed and dies.error == "the link to dies was lost — check the board"
    # the clip it died in is reported failed (nothing was decoded of it), and the suite stops there
    assert [(r.name, r.passed) for r in dies.result.results] == [("a", True), ("b", False)]
    assert dies.result.results[1].error == dies.error and dies.result.meta == {"device": "dies"}
    assert gone.error == "cannot reach 10.0.0.9:22 — check the address" and gone.result.results == []
    assert bug.error == "RuntimeError: a bug"
    assert sorted(closed) == ["dies", "local"]      # the link of a device that died is closed too


def test_alone_a_device_failure_propagates(tmp_path):
    suite = hello_suite(tmp_path, names=("a", "b"))
    with pytest.raises(WhisperKVError, match="was lost"):
        run_on_device("ssh://dies", device([], "dies", die_at=1), suite)


def test_a_decode_that_fails_half_way_fails_its_clip_with_the_text_decoded_so_far(tmp_path):
    suite = hello_suite(tmp_path, names=("a", "b", "c"))
    calls = []

    def start(stack):
        def decode(mels, options, n_frames):
            calls.append(1)
            events = fake_events([1, 2], " hello world", "eot")
            if len(calls) == 2:          # clip b: its first token arrives, then the link drops
                events[1].text = " hello"
                yield from events[:2]
                raise WhisperKVError("the link to board dropped", "check the board")
            yield from events
        return decode, (), {"device": "board"}

    run = run_on_device("board", start, suite, keep_errors=True)
    a, b = run.result.results          # c never ran: the device was gone
    assert a.passed and not b.passed and b.text == "hello" and b.steps == 1
    assert b.error == run.error == "the link to board dropped — check the board"
