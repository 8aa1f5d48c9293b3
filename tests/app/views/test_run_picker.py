"""Every count shown for a run agrees: the run picker's with the banner's and the status bar's once it ended, and
while it decodes the picker counts the tokens already shown, never "0 tok" beside text; a long run says its
window and step."""
from __future__ import annotations

import re

from PySide6.QtCore import QObject, Slot

from app.runs.progress import progress
from app.runs.session import Session
from core.decode.events import EncodedEvent
from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait
from tests.app.runs.test_exports import make_run, token


class Watch(QObject):
    """A GUI-thread object that reads the picker each time the run gains events (after the window did)."""

    def __init__(self, window):
        super().__init__()
        self.window, self.seen = window, []

    @Slot(object)
    def updated(self, run) -> None:
        picker = self.window.run_picker
        label = picker.itemText(picker.findData(run.id))
        self.seen.append((label, run.text().strip(), self.window.status.currentMessage()))


def count(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found, f"no count in {text!r}"
    return int(found.group(1))


def test_the_picker_and_the_banner_count_the_same_tokens(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    open_and_wait(window, "en_asterisk_hello-world.wav")
    watch = Watch(window)
    window.runs.updated.connect(watch.updated)
    run = transcribe_and_wait(window, language="en")
    assert run.stop_reason == "eot"                      # an EOT step the picker's text tokens do not count
    label = window.run_picker.itemText(window.run_picker.findData(run.id))
    shown = count(r"(\d+) tok\b", label)
    assert count(r"(\d+) tokens", window.banner.text()) == shown
    assert count(r"(\d+) tokens", window.status.currentMessage()) == shown
    while_running = [(text_label, text) for text_label, text, _ in watch.seen if "running" in text_label]
    assert while_running, "the picker was seen while the run decoded"
    for text_label, text in while_running:
        assert (count(r"(\d+) tok\b", text_label) > 0) == bool(text), (text_label, text)
    assert any("window 1 of 1 · step" in message for _, _, message in watch.seen)


def test_a_long_run_says_its_window_and_step():
    session = Session()
    events = [EncodedEvent(0, 900.0, "en")] + [token(0, i, 100 + i, " a") for i in range(30)]
    events += [EncodedEvent(1, 900.0, "en")] + [token(1, i, 100 + i, " b") for i in range(3)]
    events += [EncodedEvent(2, 900.0, "en")] + [token(2, i, 100 + i, " c") for i in range(41)]
    run = make_run(session, events, duration=12 * 30.0)
    assert progress(run) == "window 3 of 12 · step 41"
