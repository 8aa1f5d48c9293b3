"""The stop-reason banner for every reason, from synthetic runs (no model needed)."""
from __future__ import annotations

import pytest

from app.runs.session import Session
from app.views.stop_banner import StopBanner
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from tests.app.conftest import special_tokens

EOT_TOKEN = special_tokens().eot


def run_ending(reason: str, steps: int = 5, error: dict | None = None, finished: bool = True):
    run = Session().new_run("clip.wav", DecodeOptions(suppress_eot=reason == "cache_full"), "local", {})
    run.add(EncodedEvent(0, 10.0, "en"), 10.0)
    for i in range(steps):
        run.add(TokenEvent(0, i, 100 + i % 4, " la", -0.2, 1e-5, [(100 + i % 4, -0.2)], 4 + i, (4 + i) * 24576, 20.0),
                20.0 + i)
    if reason == "eot":
        run.add(TokenEvent(0, steps, EOT_TOKEN, "", -0.01, 0.99, [(EOT_TOKEN, -0.01)], 4 + steps, (4 + steps) * 24576, 20.0,
                           is_special=True), 30.0 + steps)
    if error is None and finished:
        run.add(DoneEvent(0, reason, [100 + i % 4 for i in range(steps)], " la" * steps, 100.0, "en"), 200.0)
    run.error = error
    return run


@pytest.mark.parametrize("reason, words", [("eot", "Stopped at EOT"), ("cache_full", "cache full"),
                                            ("max_tokens", "max tokens"), ("cancelled", "Cancelled")])
def test_each_stop_reason_has_its_banner(qtbot, reason, words):
    banner = StopBanner()
    qtbot.addWidget(banner)
    run = run_ending(reason, steps=40 if reason == "cache_full" else 5)
    banner.show_run(run)
    assert banner.reason == reason and words in banner.text() and banner.isVisibleTo(banner.parentWidget() or banner)
    if reason == "cache_full":
        assert "loop" in banner.text()  # the shared verdict names the repetition that filled the cache


def test_error_banner_names_the_problem(qtbot):
    banner = StopBanner()
    qtbot.addWidget(banner)
    banner.show_run(run_ending("", error={"problem": "the link to local closed", "fix": "retry", "code": "link_lost"}))
    assert banner.reason == "error" and "the link to local closed" in banner.text()


def test_running_banner_text_is_stable(qtbot):
    banner = StopBanner()
    qtbot.addWidget(banner)
    run = run_ending("eot", finished=False)
    banner.show_run(run)
    first = banner.text()
    run.add(TokenEvent(0, 5, 7, " more", -0.1, 1e-4, [], 9, 9 * 24576, 20.0), 300.0)
    banner.show_run(run)
    assert banner.reason == "running" and banner.text() == first


def test_the_runner_load_is_a_phase_of_its_own(qtbot):
    banner = StopBanner()
    qtbot.addWidget(banner)
    run = Session().new_run("clip.wav", DecodeOptions(), "local", {})
    run.runner_loading = True
    banner.show_run(run)
    assert banner.reason == "loading" and "loading the model" in banner.text()
    run.add(EncodedEvent(0, 10.0, "en"), 10.0)
    banner.show_run(run)
    assert banner.reason == "running" and "Decoding" in banner.text()
