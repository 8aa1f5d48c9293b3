"""A live stream is a run of the session in the real window (offscreen, local runner): in the run picker at once,
token rows from every pass, the committed text as its text, in the session JSON, comparable with an offline run
of the same clip, and exported from the File menu."""
import json

import pytest

from app.runs.session import Session
from core.qa.scoring import normalize
from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait, wait_for

CLIP = "en_asterisk_hello-world.wav"


@pytest.fixture(scope="module")
def streamed(qapp, tmp_path_factory):
    """The window after an offline run of the clip and then a live stream of it; (window, offline, live)."""
    w = make_window(settings_file(tmp_path_factory.mktemp("settings") / "app.ini"))
    open_and_wait(w, CLIP)
    offline = transcribe_and_wait(w, language="en", cache=True)
    failed, finished = [], []
    w.failureShown.connect(failed.append)
    w.runFinished.connect(finished.append)
    w.live_panel.startRequested.emit("file")
    live = w.session.runs[-1]
    assert live is not offline and live.live is not None
    picked = w.run_picker.currentText()
    assert picked.startswith(f"#{live.id} live: {CLIP}") and "streaming" in picked and w.run is live
    wait_for(lambda: finished or failed, "the live stream to end")
    assert not failed, failed[0].problem
    wait_for(lambda: w.live_panel.summary is not None, "the Live tab to finish")
    yield w, offline, live
    w.close()


def test_the_live_run_ends_with_token_rows_and_the_committed_text(streamed):
    w, _, live = streamed
    assert live.stop_reason == "end of stream" and live.rows
    assert len(live.finished_windows) == len(live.live["passes"]) >= 1   # one window per pass
    assert live.text() == w.live_panel.committed.strip() == w.live_panel.summary["text"]
    assert "hello world" in normalize(live.text())
    label = w.run_picker.itemText(w.run_picker.findData(live.id))
    assert label.startswith(f"#{live.id} live: {CLIP}") and label.endswith("end of stream")
    assert w.table.model().rowCount() == len(live.rows)


def test_the_session_json_round_trips_the_live_run(streamed, tmp_path):
    w, _, live = streamed
    path = w.exports.export("json", str(tmp_path / "session.json"))
    back = Session.from_dict(json.loads(path.read_text())).by_id(live.id)
    assert back.live["text"] == live.text() and back.live["passes"] == live.live["passes"]
    assert back.stop_reason == "end of stream" and len(back.rows) == len(live.rows)


def test_compare_gives_both_speeds_and_the_text_comparison(streamed):
    w, offline, live = streamed
    w.tabs.setCurrentWidget(w.compare)
    w.compare.choose(live.id, offline.id)
    sentence = w.compare.verdict.text()
    for run in (live, offline):
        assert f"#{run.id}" in sentence and f"{run.decode_ms_per_token():.1f} ms" in sentence
    assert f"Text of live #{live.id} against #{offline.id}: WER" in sentence


def test_txt_export_of_the_live_run_is_its_committed_text(streamed, tmp_path):
    w, _, live = streamed
    w.open_run(live)
    path = w.exports.export("txt", str(tmp_path / "live.txt"))
    assert path.read_text(encoding="utf-8") == w.live_panel.summary["text"] + "\n"
    w.live_panel.export(tmp_path / "tab.txt")
    assert (tmp_path / "tab.txt").read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
