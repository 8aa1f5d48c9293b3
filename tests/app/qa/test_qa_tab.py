"""The QA tab driving a stand-in host through its signals: the host answers each clip with a scripted run
(no model), so these tests check the tab's flow — table, progress, pass/fail, opening rows, reports, setup
errors."""
from __future__ import annotations

import json

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from app.runs.session import Session
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from tests.app.conftest import special_tokens, wait_for
from tests.conftest import AUDIO

EOT_TOKEN = special_tokens().eot


class ScriptedHost(QObject):
    """Stands in for the main window, wired to the tab's signals as the window is: each requested clip
    becomes a run that says " Hello world." and ends at EOT (or is cancelled when stop was requested).
    With `hold`, a run goes on until stop is requested, as a long decode would."""

    runFinished = Signal(object)

    def __init__(self):
        super().__init__()
        self.session = Session()
        self.opened, self.failures, self.requests, self.cancelled, self.windows = [], [], [], False, []
        self.hold, self.held = False, None
        self.dies = False

    def attach(self, tab):
        tab.transcribeRequested.connect(
            lambda clip, options, window: tab.run_started(self.transcribe_clip(clip, options, window)))
        tab.stopRequested.connect(self.stop)
        tab.openRunRequested.connect(self.open_run)
        tab.failed.connect(self.show_failure)
        self.runFinished.connect(tab.run_finished)
        return tab

    def transcribe_clip(self, clip, options, window=None):
        run = self.session.new_run(clip.name, options, "scripted", {}, clip.duration_s)
        self.requests.append(options)
        self.windows.append(window)
        if self.hold:
            self.held = run
        else:
            QTimer.singleShot(10, lambda: self._play(run))
        return run

    def _play(self, run):
        run.add(EncodedEvent(window=0, ms=50.0, language=run.options.language), 60.0)
        words = [(9, " Hello"), (10, " world"), (11, ".")] if not self.cancelled else [(9, " Hello")]
        for i, (tok, text) in enumerate(words):
            run.add(TokenEvent(window=0, step=i, token=tok, text=text, logprob=-0.1, eot_prob=0.01,
                               top=[(tok, -0.1), (EOT_TOKEN, -4.0)], cache_len=5 + i, cache_bytes=0, ms=5.0), 70.0 + i)
        if not self.cancelled:
            run.add(TokenEvent(window=0, step=3, token=EOT_TOKEN, text="", logprob=-0.02, eot_prob=0.98,
                               top=[(EOT_TOKEN, -0.02), (12, -4.1)], cache_len=8, cache_bytes=0, ms=5.0,
                               is_special=True), 80.0)
        if self.dies:        # the runner died before its done event: the run carries the error
            run.error = {"problem": "the link to scripted closed while waiting for the next event",
                         "fix": "check that the device is up", "code": "link_lost"}
            self.runFinished.emit(run)
            return
        reason = "cancelled" if self.cancelled else "eot"
        run.add(DoneEvent(window=0, reason=reason, tokens=[t for t, _ in words], text="".join(t for _, t in words),
                          ms_total=90.0, language=run.options.language), 90.0)
        self.runFinished.emit(run)

    def open_run(self, run):
        self.opened.append(run)

    def stop(self):
        self.cancelled = True
        if self.held is not None:
            run, self.held = self.held, None
            QTimer.singleShot(10, lambda: self._play(run))

    def show_failure(self, failure):
        self.failures.append(failure)


def suite(tmp_path, *references, extra=""):
    clips = "".join(f'[[clip]]\naudio = "{AUDIO / "en_asterisk_hello-world.wav"}"\nname = "c{i}"\nlanguage = "en"\n'
                    f'reference = "{ref}"\nmax_wer = 0.1\n{extra}' for i, ref in enumerate(references))
    (tmp_path / "s.toml").write_text(clips, encoding="utf-8")
    return tmp_path / "s.toml"


def run_tab(qtbot, host, path, tab=None):
    from app.qa.tab import QaTab

    if tab is None:
        tab = host.attach(QaTab())
        qtbot.addWidget(tab)
    finished = []
    tab.suiteFinished.connect(finished.append)
    assert tab.start(str(path))
    wait_for(lambda: finished, "the suite to finish")
    tab.tasks.wait_all()
    return tab, finished[0]


def cell(tab, row, name):
    from app.qa.tab import COLUMNS

    return tab.table.item(row, COLUMNS.index(name)).text()


def test_suite_fills_the_table_and_rows_open_their_runs(qtbot, tmp_path):
    host = ScriptedHost()
    tab, result = run_tab(qtbot, host, suite(tmp_path, "Hello world.", "Goodbye moon.", extra="max_tokens = 99\n"))
    assert [r.passed for r in result.results] == [True, False]
    assert [cell(tab, i, "result") for i in range(2)] == ["PASS", "FAIL"]
    assert cell(tab, 0, "why it stopped") == "EOT at step 3 (p=0.98)" and cell(tab, 0, "tokens") == "3"
    assert cell(tab, 1, "error rate") == "WER 1.000"
    assert tab.progress.value() == tab.progress.maximum() == 2
    assert "FAIL: 1/2 clips passed" in tab.status.text()
    assert [(o.language, o.max_tokens, o.cache, o.suppress_eot) for o in host.requests] == [("en", 99, True, False)] * 2
    assert all(o.attention for o in host.requests)   # a failing clip's report shows where it looked
    assert tab.open_row(1) is host.session.runs[1] and host.opened == [host.session.runs[1]]
    html = tab.write_report(tmp_path / "report")
    doc = json.loads((tmp_path / "report" / "qa.json").read_text())
    assert html.is_file() and [c["name"] for c in doc["clips"]] == ["c0", "c1"]


def test_bad_suite_shows_the_problem_and_the_fix(qtbot, tmp_path):
    from app.qa.tab import QaTab

    host = ScriptedHost()
    tab = host.attach(QaTab())
    qtbot.addWidget(tab)
    (tmp_path / "bad.toml").write_text('[[clip]]\naudio = "gone.wav"\n')
    assert not tab.start(str(tmp_path / "bad.toml"))
    (failure,) = host.failures
    assert "audio not found" in failure.problem and "relative paths" in failure.fix
    assert tab.start_button.isEnabled() and not host.requests


def test_stop_ends_the_suite_after_the_running_clip(qtbot, tmp_path):
    host = ScriptedHost()
    host.hold = True                 # the first clip decodes until Stop (a timer could otherwise end it first)
    from app.qa.tab import QaTab

    tab = host.attach(QaTab())
    qtbot.addWidget(tab)
    finished = []
    tab.suiteFinished.connect(finished.append)
    tab.start(str(suite(tmp_path, "Hello world.", "Hello world.", extra="suppress_eot = true\n")))
    wait_for(lambda: host.requests, "the first clip to start")
    assert host.requests[0].suppress_eot
    tab.stop()
    wait_for(lambda: finished, "the suite to stop")
    tab.tasks.wait_all()
    (only,) = finished[0].results
    assert only.stop_reason == "cancelled" and not only.passed and "(1 not run)" in tab.status.text()


def test_segments_view_and_verdict_of_a_timestamped_run(qtbot):
    from app.views.segments import SegmentsView
    from core.decode.options import DecodeOptions

    run = Session().new_run("a.wav", DecodeOptions(timestamps=True), "scripted", {}, 3.0)
    view = SegmentsView()
    qtbot.addWidget(view)
    run.add(EncodedEvent(window=0, ms=1.0, language="en"), 1.0)
    view.set_run(run)
    assert view.rowCount() == 0 and "as each window finishes" in view.toolTip()    # timestamps on, none done yet
    run.add(TokenEvent(window=0, step=0, token=EOT_TOKEN, text="", logprob=-0.1, eot_prob=0.9,
                       top=[(EOT_TOKEN, -0.1)], cache_len=4, cache_bytes=0, ms=1.0, is_special=True), 2.0)
    segments = [{"start": 0.4, "end": 1.2, "text": " Hi"}, {"start": 1.2, "end": 62.5, "text": " there"}]
    run.add(DoneEvent(window=0, reason="eot", tokens=[], text=" Hi there", ms_total=3.0, language="en",
                      segments=segments), 3.0)
    view.set_run(run)
    assert [[view.item(r, c).text() for c in range(3)] for r in range(2)] == \
        [["00:00.40", "00:01.20", "Hi"], ["00:01.20", "01:02.50", "there"]]
    assert run.verdict() == "EOT at step 0 (p=0.90)"


def test_a_clip_whose_runner_dies_fails_with_the_text_decoded_so_far(qtbot, tmp_path):
    host = ScriptedHost()
    host.dies = True
    tab, result = run_tab(qtbot, host, suite(tmp_path, "Hello world."))
    (r,) = result.results
    assert not r.passed and r.error.startswith("the link to scripted closed") and r.text == "Hello world."
    assert cell(tab, 0, "result") == "FAIL"


def test_the_report_is_written_when_the_run_ends_and_open_report_says_where_it_is(qtbot, tmp_path, monkeypatch):
    """No "Write report…" needed: qa.html lands under the studio's data folder; with no viewer to start
    (no xdg-open on PATH here), "Open report" says where the file is, in text that can be copied."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    tab, result = run_tab(qtbot, ScriptedHost(), suite(tmp_path, "Hello world."))
    html = tab.report.last
    assert html is not None and html.is_file() and html.name == "qa.html"
    assert html.is_relative_to(tmp_path / "data") and "qa-reports" in html.parts
    assert (html.parent / "qa.json").is_file() and tab.report.open_button.isEnabled()
    assert tab.report.open() is False
    assert tab.report.where.text() == f"No viewer could be started for the report: open it yourself, it is at {html}"
    assert tab.report.where.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse


def test_the_window_asked_goes_with_each_clip_and_auto_enables_its_floor_and_margin(qtbot, tmp_path):
    from app.qa.tab import QaTab
    from core.decode.window_choice import WindowRule

    host = ScriptedHost()
    tab = host.attach(QaTab())
    qtbot.addWidget(tab)
    box = tab.window
    assert box.rule() == WindowRule() and not any(b.isEnabled() for b in box.boxes.values())
    box.choice.setCurrentIndex(box.choice.findData("auto"))
    assert all(b.isEnabled() for b in box.boxes.values())
    box.boxes["window_floor_s"].setValue(20.0)
    tab, result = run_tab(qtbot, host, suite(tmp_path, "Hello world.", "Hello world."), tab=tab)
    assert host.windows == [WindowRule("auto", 20.0, 2.0)] * 2
    assert result.meta["window"] == "auto" and result.meta["window_floor_s"] == 20.0
