"""The QA report's formats are one table (core/qa/report.py::FORMATS): a toy format, one row and its writer, is a
choice of `whisperkv qa --format` with its words in the help, and `whisperkv qa` writes it beside the others."""
from __future__ import annotations

import contextlib
import io

import pytest

from cli import qa_cmd
from cli.main import build_parser, main
from core.file_formats import FileFormat, text_writer
from core.qa import report as qa_report
from core.qa.farm import DeviceRun
from core.qa.run import SuiteResult
from tests.core.qa.qa_helpers import hello_suite, result

TOY = FileFormat("md", ".md", text_writer(lambda report: f"# {report.suite}\n"), "a Markdown title", "Markdown")


@pytest.fixture
def toy_format(monkeypatch):
    monkeypatch.setattr(qa_report, "FORMATS", [*qa_report.FORMATS, TOY])


@pytest.fixture
def decoded(monkeypatch, tmp_path):
    """`whisperkv qa` as if the local device had decoded every clip of a small suite right."""
    suite = hello_suite(tmp_path, names=("a", "b"))

    def run_on_device(url, start, suite, cache, timestamps, on_result, on_event, window):
        return DeviceRun(url, SuiteResult(suite.name, str(suite.path), [result(c) for c in suite.clips],
                                          {"device": url}))
    monkeypatch.setattr(qa_cmd, "run_on_device", run_on_device)
    monkeypatch.setattr(qa_cmd, "check_languages", lambda suite, urls: None)
    return suite


def test_a_toy_format_is_a_choice_with_its_words_in_the_help(toy_format):
    said = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stdout(said):
        main(["qa", "--help"])
    help_text = " ".join(said.getvalue().split())
    assert "md: a Markdown title" in help_text and "qa.html and qa.md go" in help_text
    assert build_parser("qa").parse_args(["qa", "s.toml", "--format", "md", "--format", "csv"]).formats == ["md", "csv"]
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        build_parser("qa").parse_args(["qa", "s.toml", "--format", "docx"])


def test_qa_writes_every_format_or_those_asked(toy_format, decoded, tmp_path):
    out = tmp_path / "all"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["qa", str(decoded.path), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["qa.csv", "qa.html", "qa.json", "qa.md"]
    assert (out / "qa.md").read_text() == f"# {decoded.name}\n"
    only = tmp_path / "only"
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert main(["qa", str(decoded.path), "--out", str(only), "--format", "md"]) == 0
    assert [p.name for p in only.iterdir()] == ["qa.md"] and f"report: {only / 'qa.md'}" in said.getvalue()
