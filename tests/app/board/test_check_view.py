"""Check board's view in the device panel (app/board/check_view.py): a legend of every mark, each rung's meaning on
hover from the rung table, warnings that say in a sentence why they are fine off a board, and doctor.html and
doctor.json written to a folder the user picks and opened, from the buttons and from a fix that names doctor.html.
The report here is made by hand; tests/app/board/test_device_panel.py climbs the real ladder."""
from __future__ import annotations

import json

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog

import app.board.check_view as check_view
from app.board.check_view import WRITE_LINK, CheckView
from device.doctor.ladder import MARKS, NAMES, RUNGS, STATUSES, Checkup, Rung, RungResult, Verdict
from device.doctor.rungs_run import NUMBERS_FIX
from tests.app.conftest import make_window, settings_file

RUNS = {"en_asterisk_hello-world.wav": {"board": {"text": "Hello world.", "pieces": ["Hello", " world", "."]},
                                        "pc": {"text": "Hello world.", "pieces": ["Hello", " world", "."]},
                                        "first_difference": None}}


def board_only_note(kind: str) -> str:
    """The speed rung's warning on a runner of this kind (`runner_kind` as the board probe says it)."""
    board = {"runner_kind": "board", "neuron_runtime": {"kind": "stand-in"}} if kind == "stand-in" else \
        {"runner_kind": kind}
    verdict = Checkup(target=None, board=board).board_only(Verdict(), "these times are not the board's", "")
    assert verdict.status == "warn"
    return verdict.notes[0]


def report(fail_at: str | None = None, fix: str = NUMBERS_FIX) -> dict:
    """A report as app/board/check.py returns it: every rung passes, speed warns as on this PC, or one fails."""
    results, failed = [], False
    for name in NAMES:
        if failed:
            results.append(RungResult(name, "not-run", {}))
            continue
        notes = [board_only_note("pc")] if name == "speed" else []
        status = "fail" if name == fail_at else "warn" if notes else "pass"
        results.append(RungResult(name, status, {"x": 1}, fix if status == "fail" else None, notes,
                                  f"{name} decided"))
        failed = status == "fail"
    return {"device": "local", "bundle": None, "rungs": [r.to_dict() for r in results],
            "lines": [r.line() for r in results], "runs": RUNS, "logs": {"runner-stderr.txt": "runner INFO ready\n"}}


def test_the_legend_lists_every_mark_with_its_meaning(qtbot):
    view = CheckView()
    qtbot.addWidget(view)
    lines = view.legend.text().splitlines()
    assert set(MARKS) == set(STATUSES) == set(check_view.MEANING)
    assert lines[:-1] == [f"{MARKS[status]} {check_view.MEANING[status]}" for status in STATUSES]
    assert lines[-1] == "Hover a rung for what it checks."


def test_each_rung_row_has_its_meaning_from_the_rung_table_on_hover(qtbot, monkeypatch):
    view = CheckView()
    qtbot.addWidget(view)
    assert len(view.texts) == len(view.marks) == len(RUNGS)
    for rung, mark, text in zip(RUNGS, view.marks, view.texts):
        for label in (mark, text):
            tip = label.toolTip()
            assert tip.startswith(f"{rung.name}: ") and rung.checks in tip and rung.board_must_show in tip
    # generated from the table, never restated: a toy table's rows are the view's rows
    toy = (Rung("toy", "that the toy squeaks", "x:y", "a squeak"),)
    monkeypatch.setattr(check_view, "RUNGS", toy)
    view = CheckView()
    qtbot.addWidget(view)
    assert [t.toolTip() for t in view.texts] == ["toy: checks that the toy squeaks.\nA real board must show: a squeak."]


def test_a_warning_off_a_board_says_in_a_sentence_that_it_is_expected_and_why(qtbot):
    for kind, why in (("pc", "this PC"), ("emulated", "an emulation"), ("stand-in", "STAND-IN")):
        note = board_only_note(kind)
        assert note.startswith("These times are not the board's. That is expected and fine here: ") and why in note
        assert note.endswith(".") and "(" not in note, note
    view = CheckView()
    qtbot.addWidget(view)
    view.show_report(report())
    row = NAMES.index("speed")
    assert view.marks[row].text() == MARKS["warn"]
    assert "! These times are not the board's. That is expected and fine here: the runner is this PC" in \
        view.texts[row].text()


def test_the_buttons_write_doctor_html_and_json_to_the_chosen_folder_and_open_it(qtbot, tmp_path, monkeypatch):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    view = window.device.check_view
    last, chosen = tmp_path / "last export", tmp_path / "chosen"
    last.mkdir()
    window.settings.export_dir = str(last)
    asked, opened = [], []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda parent, title, start: asked.append(start) or str(chosen)))
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url) or True))
    monkeypatch.setattr(window.board.checker, "start", lambda profile, password="": None)   # no ladder climbs
    window.device.check_button.click()
    assert view.isVisibleTo(window) and not view.write_button.isEnabled()
    window.board.checker.rung.emit(0, STATUSES.index("pass"))
    assert view.marks[0].text() == MARKS["pass"]
    window.board.checker.checked.emit(report())
    assert [m.text() for m in view.marks] == [MARKS["warn"] if n == "speed" else MARKS["pass"] for n in NAMES]
    assert view.write_button.isEnabled()
    view.write_button.click()
    assert asked == [str(last)]            # the dialog starts in the last export folder
    doc = json.loads((chosen / "doctor.json").read_text())
    assert doc == {k: report()[k] for k in ("device", "bundle", "rungs")}
    page = (chosen / "doctor.html").read_text()
    assert "whisperkv doctor" in page and "Hello world." in page and "speed decided" in page
    assert (chosen / "runner-stderr.txt").read_text() == "runner INFO ready\n"     # the board's logs beside it
    assert window.settings.export_dir == str(chosen) and str(chosen / "doctor.html") in view.where.text()
    assert view.open_button.isEnabled()
    view.open_button.click()
    assert opened == [QUrl.fromLocalFile(str(chosen / "doctor.html"))]


def test_a_fix_that_says_attach_doctor_html_writes_it_from_the_panel(qtbot, tmp_path, monkeypatch):
    view = CheckView()
    qtbot.addWidget(view)
    assert not view.open_button.isEnabled()
    view.show_report(report(fail_at="numbers"))
    row = NAMES.index("numbers")
    assert view.marks[row].text() == MARKS["fail"] and f"href='{WRITE_LINK}'" in view.texts[row].text()
    assert [m.text() for m in view.marks[row + 1:]] == [MARKS["not-run"]] * (len(NAMES) - row - 1)
    assert "href" not in view.texts[NAMES.index("reach")].text()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a: str(tmp_path / "bug")))
    view.texts[row].linkActivated.emit(WRITE_LINK)
    assert (tmp_path / "bug" / "doctor.html").is_file() and (tmp_path / "bug" / "doctor.json").is_file()
    assert view.open_button.isEnabled()
