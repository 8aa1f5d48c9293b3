"""One report over several devices, and its JSON, CSV and HTML."""
import csv
import io
import json

from core.qa.baseline import SlowerRule, compare, settings
from core.qa.farm import QAReport
from core.qa.report import to_csv, write_reports
from core.qa.run import SuiteResult
from tests.core.qa.qa_helpers import hello_suite, result, two_devices


def test_a_device_that_died_fails_the_report_and_keeps_its_clips(tmp_path):
    report = two_devices(tmp_path, error="the link to ssh://root@board was lost")
    assert not report.passed and report.runs[0].passed
    assert report.clip_names() == ["a", "b"]
    b = next(row for row in report.device_rows if row.name == "b")
    assert (b.tokens_identical, b.error_delta, b.latency_ratio) == (None, None, None)
    doc = report.to_dict()
    assert [d["error"] for d in doc["devices"]] == ["", "the link to ssh://root@board was lost"]
    assert [(c["device"], c["name"]) for c in doc["clips"]] == [("local", "a"), ("local", "b"),
                                                                ("ssh://root@board", "a")]
    assert doc["meta"] == {"devices": ["local", "ssh://root@board"], "cache": "on"} and not doc["passed"]
    html = write_reports(report, tmp_path / "out")["html"].read_text()
    assert "FAILED (1 clips done): the link to ssh://root@board was lost" in html and "not run" in html


def test_json_csv_and_html_have_a_column_group_per_device(tmp_path):
    report = two_devices(tmp_path)
    paths = write_reports(report, tmp_path / "out")
    doc = json.loads(paths["json"].read_text())
    assert doc["n_clips"] == 4 and doc["passed"] and len(doc["cross"]) == 2
    assert doc["cross"][0]["tokens_identical"] is False and doc["clips"][0]["token_ids"] == [1, 2]
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert [r["name"] for r in rows] == ["a", "b"]
    assert rows[0]["local error_rate"] == "0.0" and rows[0]["ssh://root@board error_rate"] == "0.5"
    assert rows[0]["ssh://root@board vs local tokens_identical"] == "False"
    assert rows[1]["ssh://root@board vs local latency_ratio"] == "1.0"
    html = paths["html"].read_text()
    assert html.count('class="group">local<') == 1 and 'class="group">ssh://root@board vs local<' in html
    assert "a on ssh://root@board" in html and 'id="clip0-1"' in html and "differ" in html
    assert '<span class="sub"><del>world</del><ins>word</ins></span>' in html


def test_baseline_marks_reach_every_format(tmp_path):
    report = two_devices(tmp_path)
    before = two_devices(tmp_path).to_dict()["clips"]
    before[2]["error_rate"] = 0.0          # the board's clip a used to be right
    report.baseline = settings("old/qa.json", SlowerRule(), ("regressed",))
    report.comparisons = compare(before, report.runs, SlowerRule())
    assert not report.passed and report.failing_marks() == [("ssh://root@board", "a", "regressed")]
    doc = report.to_dict()
    assert doc["clips"][2]["baseline"]["marks"] == ["regressed"] and doc["baseline"]["fail_on"] == ["regressed"]
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert rows[0]["ssh://root@board marks"] == "regressed" and rows[0]["local marks"] == ""
    html = write_reports(report, tmp_path / "out")["html"].read_text()
    assert '<span class="mark regressed">regressed</span>' in html and "regressed: WER 0.000 → 0.500" in html
    assert "1 regressed, 0 slower, 0 changed" in html
    report.baseline["fail_on"] = []
    assert report.passed                   # marked, but not failing the run


def test_a_single_device_report_keeps_its_layout(tmp_path):
    (a,) = hello_suite(tmp_path).clips
    report = QAReport.single(SuiteResult("s", "s.toml", [result(a)], {"device": "in-process", "backend": "onnx"}))
    doc = report.to_dict()
    assert doc["meta"] == {"device": "in-process", "backend": "onnx"} and doc["cross"] == []
    assert doc["clips"][0]["device"] == "in-process" and doc["baseline"] is None
    (row,) = csv.DictReader(io.StringIO(to_csv(report)))
    assert row["name"] == "a" and row["marks"] == ""
