"""QA suites: loading and validation, scoring, reports, and one forced loop through the whole chain."""
import csv
import io
import json

import pytest

from core.qa.report import to_csv, write_reports
from core.qa.run import SUMMARY_COLUMNS, SuiteResult, run_suite, score
from core.qa.suite import SuiteError, load_suite
from tests.conftest import AUDIO
from tests.core.qa.qa_helpers import CLIP, decoder, fake_transcript, write


def test_default_suite_covers_every_bundled_clip(references):
    suite = load_suite(AUDIO / "suite.toml")
    assert {c.name for c in suite.clips} == set(references)
    for c in suite.clips:
        assert c.audio.is_file() and c.reference == references[c.name]["reference"]
        assert (c.metric, c.max_error) == (("cer", 0.15) if c.language == "zh" else ("wer", 0.10))
        assert c.expect_stop == ("eot",)


def test_relative_audio_inline_reference_and_defaults(tmp_path):
    (tmp_path / "clips").mkdir()
    (tmp_path / "clips" / "a.wav").write_bytes((AUDIO / "test_zh.wav").read_bytes())
    suite = load_suite(write(tmp_path, '[defaults]\nmax_tokens = 50\n[[clip]]\naudio = "clips/a.wav"\n'
                                       'language = "zh"\nreference = "甚至"\nmax_cer = 0.2\nname = "zh one"\n'))
    (c,) = suite.clips
    assert (c.name, c.audio, c.metric, c.max_error, c.max_tokens) == ("zh one", tmp_path / "clips" / "a.wav",
                                                                      "cer", 0.2, 50)
    assert c.options(cache=False).language == "zh" and not c.options(cache=False).cache


@pytest.mark.parametrize("text, problem, fix", [
    ("clip = [", "not valid TOML", "fix the line"),
    ('name = "x"\n', "lists no clips", "[[clip]]"),
    ("colour = 1\n" + CLIP + "max_wer = 0.1\n", "unknown top-level key 'colour'", "[[clip]]"),
    (CLIP + "max_werr = 0.1\n", "unknown key 'max_werr'", "max_wer"),
    (CLIP, "no error-rate limit", "max_wer = 0.10"),
    (CLIP + "max_cer = 0.1\n", "max_cer given, but en is scored by WER", "use max_wer"),
    (CLIP + 'max_wer = "low"\n', "max_wer has the wrong type (str)", "number"),
    (CLIP + "max_wer = 0.1\nexpect_stop = 'done'\n", "unknown reason 'done'", "eot"),
    ('[[clip]]\naudio = "nowhere.wav"\nlanguage = "en"\nreference = "x"\nmax_wer = 0.1\n', "audio not found",
     "relative paths start at the suite file's folder"),
    (f'[[clip]]\naudio = "{AUDIO / "test_en.wav"}"\nreference = "x"\nmax_wer = 0.1\n', "has no language",
     'language = "en"'),
    (f'[[clip]]\naudio = "{AUDIO / "test_en.wav"}"\nlanguage = "en"\nmax_wer = 0.1\n', "no reference text",
     "reference ="),
    (CLIP + "max_wer = 0.1\n" + CLIP + "max_wer = 0.1\n", "two clips are named 'test_en.wav'", "name = "),
    ('references = "missing.json"\n' + CLIP + "max_wer = 0.1\n", "references file not found", "relative"),
])
def test_bad_suites_name_the_problem_and_the_fix(tmp_path, text, problem, fix):
    with pytest.raises(SuiteError) as err:
        load_suite(write(tmp_path, text))
    assert problem in err.value.problem and fix in err.value.fix


def test_missing_suite_file(tmp_path):
    with pytest.raises(SuiteError, match="suite file not found"):
        load_suite(tmp_path / "none.toml")


def test_score_passes_fails_and_says_why(tmp_path):
    clip = load_suite(write(tmp_path, CLIP + "max_wer = 0.5\nexpect_stop = 'eot'\n")).clips[0]
    ok = score(clip, fake_transcript([1, 2], " Ask not!", "eot"), wall_ms=2000, duration_s=11.0)
    assert ok.passed and ok.error_rate == 0 and ok.verdict == "EOT at step 2 (p=0.90)" and ok.rtf == 0.1818
    assert (ok.tokens, ok.encoder_ms, ok.per_token_ms_p50) == (2, 100.0, 11.5)
    bad = score(clip, fake_transcript([1, 2, 3] * 10, " tell me", "max_tokens"), wall_ms=1, duration_s=1)
    assert not bad.passed and bad.failures[0] == "WER 1.000 > 0.50"
    assert any("expected eot" in f and "3-gram loop from step 0" in f for f in bad.failures)


def test_reports_json_csv_html(tmp_path):
    clip = load_suite(write(tmp_path, CLIP + "max_wer = 0.5\n")).clips[0]
    r = score(clip, fake_transcript([5, 6, 7] * 6, "ask <b>not</b>", "cache_full"), wall_ms=1000, duration_s=2)
    result = SuiteResult("demo", "suite.toml", [r], meta={"device": "in-process"})
    paths = write_reports(result, tmp_path / "out")
    doc = json.loads(paths["json"].read_text())
    assert doc["passed"] is False and doc["clips"][0]["verdict"].startswith("cache_full at 21 after a 3-gram")
    (row,) = csv.DictReader(io.StringIO(to_csv(result)))
    assert row["name"] == "test_en.wav" and row["passed"] == "False" and row["stop_reason"] == "cache_full"
    html = paths["html"].read_text()
    assert html.count("<svg") == 3 and "3-gram loop from step 0" in html and "&lt;b&gt;" in html
    assert "src=" not in html and "href=\"http" not in html and "<link" not in html   # self-contained



def test_forced_loop_fails_the_clip_with_a_cache_full_verdict(tmp_path, onnx_model, encoder_cache):
    """EOT suppressed, max_tokens above the cache: the decode must run into the ceiling, and the
    verdict must name the loop that got it there. On ONNX Runtime: 444 steps, and the verdict is the suite's,
    whichever backend steps."""
    suite = load_suite(write(tmp_path, f'[[clip]]\naudio = "{AUDIO / "en_asterisk_hello-world.wav"}"\n'
                                       'language = "en"\nreference = "Hello world."\nmax_wer = 0.1\n'
                                       'suppress_eot = true\nmax_tokens = 1000\nexpect_stop = "eot"\n'))
    seen = []
    result = run_suite(suite, decoder(onnx_model, encoder_cache), on_result=lambda i, r: seen.append(i))
    (r,) = result.results
    assert seen == [0] and not result.passed and r.stop_reason == "cache_full"
    assert r.verdict.startswith("cache_full at 448 after a ") and "-gram loop from step " in r.verdict
    assert r.loop["end_step"] == r.steps - 1 and r.loop["repeats"] >= 3
    assert any(f.startswith("stopped: cache_full at 448") for f in r.failures)


def test_timestamped_clip_has_monotone_segments_within_the_audio(tmp_path, model, encoder_cache, references):
    ref = references["test_en.wav"]["reference"]
    suite = load_suite(write(tmp_path, f'[[clip]]\naudio = "{AUDIO / "test_en.wav"}"\nlanguage = "en"\n'
                                       f'reference = "{ref}"\nmax_wer = 0.1\ntimestamps = true\n'))
    result = run_suite(suite, decoder(model, encoder_cache))
    (r,) = result.results
    assert r.passed, (r.failures, r.text)
    bounds = [t for g in r.segments for t in (g["start"], g["end"])]
    assert len(r.segments) >= 2 and bounds == sorted(bounds)
    assert all(g["start"] < g["end"] and g["text"].strip() for g in r.segments)
    assert bounds[0] >= 0 and bounds[-1] <= r.duration_s + 0.02   # one 20 ms timestamp step of slack
    html = write_reports(result, tmp_path / "out")["html"].read_text()
    assert "timestamped segments" in html and html.count("<svg") == 4


def test_a_clip_on_a_reused_encoder_output_says_so_in_its_row(tmp_path):
    """The runner keeps encoder outputs: a clip the studio decoded before shows an encoder of a few ms. Its row
    must say the encoder was reused, not pass that off as this clip's timing."""
    from dataclasses import replace as copy

    from core.decode.events import EncodedEvent
    from core.decode.transcript import Transcript
    from tests.core.qa.qa_helpers import fake_events

    clip = load_suite(write(tmp_path, CLIP + "max_wer = 0.5\n")).clips[0]
    fresh = score(clip, fake_transcript([1, 2], " Ask not!", "eot"), wall_ms=2000, duration_s=11.0)
    assert not fresh.encoder_reused and "reused" not in " ".join(fresh.summary_cells())
    reused = Transcript()
    for ev in fake_events([1, 2], " Ask not!", "eot"):
        reused.add(copy(ev, cache_hit=True, ms=3.0) if isinstance(ev, EncodedEvent) else ev)
    row = score(clip, reused, wall_ms=300, duration_s=11.0)
    cells = dict(zip(SUMMARY_COLUMNS, row.summary_cells()))
    assert row.encoder_reused and cells["encoder ms"] == "encoder reused" and "(encoder reused)" in cells["RTF"]
