"""Device panel: test connection shows the device-info; deploy to a local directory drives the progress bar."""
from __future__ import annotations

from device.link.profile import DeviceProfile
from tests.app.conftest import make_window, on_gui_thread, open_and_wait, settings_file, wait_for


def test_test_connection_shows_device_info(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    window.device.test_button.click()
    wait_for(lambda: window.device.test_button.isEnabled(), "the connection test to finish")
    info = window.board.info
    assert info["device"] == "local"
    assert info["model_sha256"] and len(info["model_sha256"]) == 64
    text = window.device.info.toPlainText()
    assert "Python" in text and info["model_sha256"] in text
    # sentences, not the report's raw Python dicts and lists
    assert not any(mark in text for mark in ("{'", "['", "None", "True", "False")), text
    assert all(line.endswith((".", "…")) for line in text.splitlines()), text
    assert "The runner answers with the" in text and "memory" in text


def test_deploy_to_a_local_directory_shows_progress(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    target = tmp_path / "board"
    window.device.show_profile(DeviceProfile.from_url(f"local?dir={target}"))
    assert window.device.deploy_button.isEnabled()
    values = []
    window.device.progress.valueChanged.connect(values.append)
    window.device.deploy_button.click()
    wait_for(lambda: window.device.deploy_button.isEnabled(), "the deploy to finish")
    assert window.device.progress.value() == window.device.progress.maximum() > 1
    assert len(values) > 1
    assert (target / "device" / "runner" / "serve" / "agent.py").is_file()
    assert "failed" not in window.device.info.toPlainText()


def test_an_unreachable_ssh_board_is_named_as_a_network_problem_in_the_forms_words(qtbot, tmp_path, monkeypatch):
    """No key and no sshd: the first thing said is the network, and no URL syntax (?key=PATH) the form lacks."""
    import socket

    from device.link.profile import DeviceProfile

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    failures = []
    window.failureShown.connect(failures.append)
    window.device.show_profile(DeviceProfile.from_url(f"ssh://qa@127.0.0.1:{port}"))
    window.device.test_button.click()
    wait_for(lambda: failures, "the connection test to fail")
    text = f"{failures[0].problem} {failures[0].fix}"
    assert f"cannot reach 127.0.0.1 on port {port}" in failures[0].problem
    assert "?" not in text and "key" not in text.lower()


def test_url_settings_in_a_fix_are_named_as_the_forms_fields():
    from app.board.form_terms import in_form_terms
    from app.errors import failure_of
    from core.errors import Fix
    from device.link.ssh_login import KEY, AuthError

    err = AuthError("x refused authentication", Fix("check the user name, ", KEY, ", or use a password"))
    assert err.fix == "check the user name, pass ?key=PATH, or use a password"
    assert in_form_terms(failure_of(err)).fix == "check the user name, fill in Key file, or use a password"
    assert in_form_terms(failure_of(AuthError("x", "pass ?key=PATH"))).fix == "pass ?key=PATH"   # text: no regex


def test_check_board_shows_the_doctors_rungs_as_they_are_decided(qtbot, tmp_path, monkeypatch):
    """The default device of a fresh settings store, this PC's runner on `auto` (native-int8b where the CPU runs
    it): every rung passes or warns (this PC is no board; int8 weights are held to their own bounds), rung by rung
    in the check view (app/board/check_view.py); the check runs on the decode worker, so a run, a live stream or a
    QA suite's clip asked for meanwhile is refused, saying why."""
    from device.doctor.ladder import MARKS, NAMES
    from device.runner.backends import choose_auto

    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    open_and_wait(window, "en_asterisk_hello-world.wav")
    view, seen = window.device.check_view, []
    shown = view.show_rung

    def show_rung(index, status):          # each mark as it is shown, and whether the report had come yet
        shown(index, status)
        seen.append((view.marks[index].text(), view.report is None))

    monkeypatch.setattr(view, "show_rung", show_rung)
    lines_on_gui = on_gui_thread(monkeypatch, window.device, "show_rung")
    window.device.check_button.click()
    assert window.transcribe() is None and not window.session.runs
    assert window.status.currentMessage().startswith("Transcribe refused: Check board is using the board")
    window.start_live("file")
    assert not window.session.runs and window.status.currentMessage().startswith("Live refused: Check board")
    qa_failures = []
    window.qa.failed.connect(qa_failures.append)
    window.qa.transcribeRequested.emit(window.clip, window.controls.options(), None)    # a QA suite's next clip
    assert [f.problem for f in qa_failures] == ["Check board is using the board"] and not window.session.runs
    wait_for(lambda: window.device.check_button.isEnabled() and window.board.checked, "the check to finish", 600)
    report = window.board.checked
    assert [r["name"] for r in report["rungs"]] == list(NAMES)
    assert all(r["status"] in ("pass", "warn") for r in report["rungs"]), report["lines"]
    loads = next(r for r in report["rungs"] if r["name"] == "loads")
    assert report["device"].startswith("local") and loads["figures"]["backend"] == choose_auto()
    assert seen[0] == (MARKS["pass"], True)                    # reach's mark shown before the ladder was done
    assert len(lines_on_gui) == len(NAMES) and all(lines_on_gui)   # each rung's mark written on the GUI thread
    assert [m.text() for m in view.marks] == [MARKS[r["status"]] for r in report["rungs"]]
    rows = [t.text() for t in view.texts]
    assert all(f"<b>{name}</b>" in row for name, row in zip(NAMES, rows))
    assert "That is expected and fine here: the runner is this PC" in "".join(rows)
    assert window.device.info.toPlainText() == f"Check board of {report['device']}: no rung failed."
    assert view.write_button.isEnabled()
    assert "checked" in window.status.device.text()


def test_check_board_is_refused_while_a_run_decodes(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    open_and_wait(window, "en_asterisk_hello-world.wav")
    window.device.show_profile(DeviceProfile.from_url("local?backend=numpy"))
    finished = []
    window.runFinished.connect(finished.append)
    run = window.transcribe()
    window.device.check_button.click()
    said = window.device.info.toPlainText()
    assert said == (f"Check board refused: run #{run.id} is decoding on the board; stop it or let it end, then "
                    "press Check board again")
    assert window.status.currentMessage() == said and not window.board.checker.running
    assert window.device.check_button.isEnabled()
    wait_for(lambda: finished, "the run to finish")
    assert run.error is None and run.stop_reason == "eot" and "hello" in run.text().lower()
