"""The QA tab writes every format of the QA report's table (core/qa/report.py::FORMATS): a toy format, one row and
its writer, lands in the tab's report folder beside qa.html, as `whisperkv qa` writes it
(tests/cli/test_qa_formats.py)."""
from __future__ import annotations

from core.qa import report as qa_report
from tests.app.qa.test_qa_tab import ScriptedHost, run_tab, suite
from tests.cli.test_qa_formats import TOY


def test_the_qa_tab_writes_a_toy_format_beside_the_others(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(qa_report, "FORMATS", [*qa_report.FORMATS, TOY])
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    tab, result = run_tab(qtbot, ScriptedHost(), suite(tmp_path, "Hello world."))
    folder = tab.report.last.parent
    assert sorted(p.name for p in folder.iterdir()) == ["qa.csv", "qa.html", "qa.json", "qa.md"]
    assert (folder / "qa.md").read_text() == f"# {result.suite}\n"
    written = tab.write_report(tmp_path / "mine")
    assert written.name == "qa.html" and (written.parent / "qa.md").is_file()
