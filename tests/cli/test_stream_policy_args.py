"""`whisperkv stream --policy`: a real file through the local runner with each policy, the JSON saying which one
ran and the latency figures peers report, the help generated from the policy table, and bad values."""
import json
import subprocess
import sys

from core.qa.scoring import error_rate
from core.stream.policies import POLICIES
from tests.conftest import AUDIO, ROOT


def whisperkv(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "cli", *args], check=False, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_alignatt_streams_a_file_in_real_time_and_prints_the_text(references):
    r = whisperkv("stream", str(AUDIO / "en_arctic_slt_a0009.wav"), "--realtime", "--policy", "alignatt",
                  "--language", "en")
    assert r.returncode == 0, r.stderr
    assert error_rate(references["en_arctic_slt_a0009.wav"]["reference"], r.stdout) <= 0.15, r.stdout
    assert "policy alignatt" in r.stderr


def test_the_json_says_which_policy_ran_with_the_latency_figures(references):
    for name in POLICIES:      # a 3 s sentence: a few passes each
        r = whisperkv("stream", str(AUDIO / "en_arctic_slt_a0009.wav"), "--json", "--language", "en",
                      "--policy", name)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["policy"] == name and doc["min_chunk_s"] == POLICIES[name].min_chunk_s
        assert ("margin_frames" in doc) == (name == "alignatt")
        assert error_rate(references["en_arctic_slt_a0009.wav"]["reference"], doc["text"]) <= 0.1, doc["text"]
        assert len(doc["commits"]) > 1      # committed in pieces as it went
        first = doc["first_visible_s"]
        assert 0 <= first["tentative"] <= first["committed"]
        assert doc["lag_s"]["median"] <= doc["lag_s"]["p90"] <= doc["lag_s"]["p95"] <= doc["lag_s"]["max"]
        assert doc["end_of_file_s"] >= 0


def test_the_help_lists_every_policy_from_the_table():
    out = whisperkv("stream", "--help").stdout
    for p in POLICIES.values():
        assert p.name in out and f"{p.min_chunk_s:g} s" in out


def test_bad_policy_values_are_one_clear_line():
    for args, words in ((("--min-chunk", "0"), "--min-chunk"), (("--margin", "-1"), "--margin")):
        r = whisperkv("stream", str(AUDIO / "test_en.wav"), *args)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.returncode != 0 and len(lines) == 1 and words in lines[0], r.stderr
    r = whisperkv("stream", str(AUDIO / "test_en.wav"), "--policy", "nope")
    assert r.returncode != 0 and "alignatt" in r.stderr and "local-agreement" in r.stderr


def test_a_toy_parameter_row_is_a_flag_that_reaches_the_stream_config(monkeypatch):
    import argparse

    from cli.stream_policy_args import add_policy_args, policy_options
    from core.stream import policies
    from core.stream.agreement import LocalAgreement
    from core.stream.policy import StreamConfig

    monkeypatch.setitem(policies.POLICIES, "toy", policies.PolicyKind("toy", "a toy rule", lambda c: LocalAgreement(),
                                                                      0.5))
    monkeypatch.setitem(policies.PARAMS, "patience", policies.PolicyParam(
        "patience", "--patience", int, 2, 1, True, "passes", "toy: passes to wait", ("toy",)))
    parser = argparse.ArgumentParser()
    add_policy_args(parser)
    assert "--patience PASSES" in parser.format_help() and "toy: passes to wait" in parser.format_help()
    config = StreamConfig(**policy_options(parser.parse_args(["--policy", "toy", "--patience", "4"])))
    assert config.params["patience"] == 4 and config.min_chunk_s == 0.5
    assert StreamConfig(**policy_options(parser.parse_args(["--policy", "toy"]))).params["patience"] == 2
