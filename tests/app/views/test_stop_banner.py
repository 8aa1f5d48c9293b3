"""The stop-reason banner for every reason, from synthetic runs (no model needed)."""
from __future__ import annotations

import numpy as np
import pytest

from app.runs.clip import AudioClip
from app.runs.session import Session
from app.views.stop_banner import StopBanner
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from tests.app.conftest import special_tokens
from tests.core.decode.crafted_attention import attention_at

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



def eot_run_looking_at(position: int, clip=None):
    """An 11 s clip whose run ends at EOT while its attention peaks at `position` (20 ms each)."""
    run = Session().new_run("clip.wav", DecodeOptions(attention=True), "local", {}, duration_s=11.0)
    run.clip = clip
    run.add(EncodedEvent(0, 10.0, "en"), 10.0)
    run.add(TokenEvent(0, 0, 100, " la", -0.2, 1e-5, [], 4, 4 * 24576, 20.0, attention=attention_at(50)), 20.0)
    run.add(TokenEvent(0, 1, EOT_TOKEN, "", -0.01, 0.99, [], 5, 5 * 24576, 20.0, is_special=True,
                       attention=attention_at(position)), 30.0)
    run.add(DoneEvent(0, "eot", [100], " la", 100.0, "en"), 40.0)
    return run


def speech_clip():
    """11 s: speech 0-4 s, a pause 4-5 s, speech 5-10.5 s, then quiet (the mel as the runner gets it)."""
    mels = np.full((1, 80, 3000), -0.4, np.float32)
    mels[0, :, :400] = mels[0, :, 500:1050] = 0.9
    return AudioClip("clip.wav", np.zeros(11 * 16000, np.float32), mels)


def test_eot_banner_says_where_attention_sat(qtbot):
    banner = StopBanner()
    qtbot.addWidget(banner)
    banner.show_run(eot_run_looking_at(205, speech_clip()))
    assert "EOT while attention was at 4.1 s of 11.0 s (a pause)" in banner.text()
    banner.show_run(eot_run_looking_at(527, speech_clip()))
    assert "EOT while attention was at 10.5 s of 11.0 s (the end of the speech)" in banner.text()
    banner.show_run(eot_run_looking_at(150, speech_clip()))
    assert "(mid-speech)" in banner.text()
    # A run read back from a session file has no audio: the place, without what was there.
    banner.show_run(eot_run_looking_at(205))
    assert "EOT while attention was at 4.1 s of 11.0 s ·" in banner.text()


def test_no_attention_no_focus(qtbot):
    banner = StopBanner()
    qtbot.addWidget(banner)
    banner.show_run(run_ending("eot"))
    assert banner.reason == "eot" and "attention" not in banner.text()


@pytest.mark.parametrize("end, words", [("end of stream", "Live stream ended"), ("stopped", "Live stream stopped")])
def test_a_live_stream_ends_under_a_neutral_banner_with_its_figures(qtbot, end, words):
    from app.runs.live import end_live, start_live
    from app.views.stop_banner import STYLES

    banner = StopBanner()
    qtbot.addWidget(banner)
    run = start_live(run_ending("eot", finished=True), "demo.wav")   # its last pass ended at EOT: not the stream's end
    banner.show_run(run)
    assert banner.reason == "streaming" and "Streaming live" in banner.text()
    end_live(run, {"text": "Congratulations, you have", "passes": [{}, {}, {}], "audio_s": 6.2,
                   "lag_s": {"median": 1.8}, "end": end})
    banner.show_run(run)
    assert banner.reason == end and banner.text().startswith(words)
    assert "3 words · 3 passes · 6.2 s of audio · text 1.8 s behind the speaker" in banner.text()
    assert "EOT" not in banner.text() and STYLES["error"][1] not in banner.styleSheet()
