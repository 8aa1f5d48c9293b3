"""Marks against a baseline: regressed, slower, changed; matching by device and clip; bad baseline files."""
import json

import pytest

from core.qa.baseline import BaselineError, SlowerRule, compare, compare_clip, describe, load_baseline
from core.qa.farm import DeviceRun, QAReport
from core.qa.run import SuiteResult
from tests.core.qa.qa_helpers import hello_suite, result


def old(r, **changes) -> dict:
    """A baseline clip: r as an earlier report stored it, with some values changed."""
    return r.to_dict() | changes


@pytest.fixture
def clip(tmp_path):
    return hello_suite(tmp_path).clips[0]


def test_the_same_result_has_no_marks(clip):
    r = result(clip)
    assert compare_clip(old(r), r, SlowerRule()).marks == []


def test_a_higher_error_rate_is_a_regression_and_a_lower_one_is_not(clip):
    r = result(clip, text="hello word")     # WER 0.5
    c = compare_clip(old(r, error_rate=0.0), r, SlowerRule())
    assert c.marks == ["regressed"] and c.error_rate == 0.0
    assert describe(c, r) == ["regressed: WER 0.000 → 0.500"]
    assert compare_clip(old(r, error_rate=1.0), r, SlowerRule()).marks == []


def test_a_clip_that_no_longer_decodes_regressed(clip):
    from core.errors import WhisperKVError
    from core.qa.run import failed

    r = failed(clip, WhisperKVError("runner refused it"))
    assert compare_clip(old(result(clip)), r, SlowerRule()).marks == ["regressed", "changed"]


@pytest.mark.parametrize("before, after, slower", [
    (10.0, 15.0, False),     # +50 %
    (20.0, 40.0, False),     # +100 %: not more than 100 %
    (10.0, 20.5, True),      # +105 %, +10.5 ms
    (30.0, 61.0, True),      # +103 %, +31 ms
    (2.0, 8.0, False),       # +300 % but only 6 ms: noise on a tiny figure
    (None, 50.0, False),     # nothing to compare with
])
def test_slower_needs_both_the_percentage_and_the_milliseconds(before, after, slower):
    assert SlowerRule().is_slower(before, after) is slower


def test_slower_and_changed_are_marked_with_their_old_values(clip):
    r = result(clip, ms=40.0)
    c = compare_clip(old(r, per_token_ms_p50=10.0, stop_reason="max_tokens"), r, SlowerRule())
    assert c.marks == ["slower", "changed"]
    assert describe(c, r) == [f"slower: p50 10.0 → {r.per_token_ms_p50:.1f} ms/token", "changed: stop max_tokens → eot"]
    assert compare_clip(old(r, per_token_ms_p50=10.0), r, SlowerRule(pct=400, ms=0)).marks == []   # 41.5 ms: +315 %


def run(device, clips, **kw):
    return DeviceRun(device, SuiteResult("s", "s.toml", [result(c, **kw) for c in clips]))


def test_several_devices_match_by_device_and_clip(tmp_path):
    clips = hello_suite(tmp_path, names=("a", "b")).clips
    now = [run("local", clips), run("ssh://board", clips, text="hello word")]
    before = QAReport("s", "s.toml", [run("local", clips, text="hello word"), run("ssh://board", clips)])
    marks = compare(before.to_dict()["clips"], now, SlowerRule())
    assert {k: c.marks for k, c in marks.items()} == {
        ("local", "a"): [], ("local", "b"): [], ("ssh://board", "a"): ["regressed"], ("ssh://board", "b"): ["regressed"]}
    only_local = compare([c for c in before.to_dict()["clips"] if c["device"] == "local"], now, SlowerRule())
    assert set(only_local) == {("local", "a"), ("local", "b")}      # the board's clips are new


def test_one_device_against_one_device_matches_by_name_alone(tmp_path):
    clips = hello_suite(tmp_path).clips
    before = QAReport("s", "s.toml", [run("ssh://old-name", clips)]).to_dict()["clips"]
    marks = compare(before, [run("ssh://new-name", clips, text="hello word")], SlowerRule())
    assert marks[("ssh://new-name", "a")].marks == ["regressed"]
    legacy = [{k: v for k, v in c.items() if k != "device"} for c in before]    # a report from before devices
    assert compare(legacy, [run("local", clips)], SlowerRule())[("local", "a")].marks == []


def test_a_report_directory_or_its_qa_json_loads(tmp_path):
    clips = hello_suite(tmp_path).clips
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "qa.json").write_text(json.dumps(QAReport("s", "s.toml", [run("local", clips)]).to_dict()))
    assert load_baseline(tmp_path / "r")[0]["name"] == "a"
    assert load_baseline(tmp_path / "r" / "qa.json")[0]["device"] == "local"


@pytest.mark.parametrize("content, problem", [
    (None, "baseline not found"),
    ("{not json", "is not a qa.json report"),
    ('{"clips": "none"}', "no list of scored clips"),
    ('[1, 2]', "no list of scored clips"),
    ('{"clips": [{"name": "a"}]}', "no list of scored clips"),
    (b"\xff\xfe\x00", "is not a qa.json report"),
])
def test_a_bad_baseline_names_the_problem_and_the_fix(tmp_path, content, problem):
    path = tmp_path / "qa.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(BaselineError) as err:
        load_baseline(path)
    assert problem in err.value.problem and str(path) in err.value.problem
    assert "--baseline DIR/qa.json" in err.value.fix
