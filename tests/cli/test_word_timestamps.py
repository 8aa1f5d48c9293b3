"""`whisperkv transcribe --word-timestamps` as a user runs it: each word of the JFK sentence timed, in order,
inside the audio, as JSON, text and per-word subtitles; refused clearly with --cache off."""
import json
import re

import pytest
import soundfile as sf

from tests.cli.test_transcribe import one_clear_line, whisperkv
from tests.conftest import AUDIO

JFK = AUDIO / "test_en.wav"


def check_words(words: list[dict], text: str, duration: float) -> None:
    assert words and "".join(w["word"] for w in words).strip() == text.strip()
    for w in words:
        assert set(w) == {"word", "start", "end", "probability"}
        assert 0 <= w["start"] <= w["end"] <= duration + 1e-9 and 0 < w["probability"] <= 1
    for a, b in zip(words, words[1:]):
        assert a["start"] <= b["start"] and a["end"] <= b["start"] + 1e-9      # monotone, no overlap


@pytest.fixture(scope="module")
def jfk_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("subs")
    r = whisperkv("transcribe", str(JFK), "--word-timestamps", "--json", "--srt", str(out / "w.srt"),
                  "--vtt", str(out / "w.vtt"))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), out


def test_each_jfk_word_has_a_time(jfk_json):
    doc, _ = jfk_json
    duration = sf.info(str(JFK)).duration
    check_words(doc["words"], doc["text"], duration)
    spoken = [w["word"].strip(" ,.").lower() for w in doc["words"]]
    assert spoken == ["and", "so", "my", "fellow", "americans", "ask", "not", "what", "your", "country", "can",
                      "do", "for", "you", "ask", "what", "you", "can", "do", "for", "your", "country"]
    by = {w["word"].strip(" ,."): w for w in doc["words"]}
    assert by["Americans"]["end"] < duration / 2 < by["country"]["start"]
    q = doc["windows"][0]["quality"]
    assert q["compression_ratio"] < 2.4 and q["avg_logprob"] > -1.0 and q["fallbacks"] == []
    assert "while attention was at" in doc["verdict"] and "(the end of the speech)" in doc["verdict"]


def test_per_word_subtitles(jfk_json):
    doc, out = jfk_json
    srt = (out / "w.srt").read_text()
    cues = re.findall(r"^(\d+)\n(\S+) --> (\S+)\n(.+)$", srt, re.MULTILINE)
    assert [c[3] for c in cues] == [w["word"].strip() for w in doc["words"]]
    assert (out / "w.vtt").read_text().startswith("WEBVTT") and "Americans," in (out / "w.vtt").read_text()


def test_text_output_lists_the_words_and_the_quality_inprocess():
    r = whisperkv("transcribe", str(JFK), "--word-timestamps", "--device", "inprocess", "--language", "en")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("[")]
    assert len(lines) == 22 and re.match(r"\[\s*\d+\.\d\ds --> \s*\d+\.\d\ds\] p=\d\.\d\d And$", lines[0])
    assert "compression" in r.stderr and "logprob" in r.stderr and "entropy" in r.stderr


def test_word_timestamps_with_cache_off_is_refused():
    line = one_clear_line(whisperkv("transcribe", str(JFK), "--word-timestamps", "--cache", "off"))
    assert "--word-timestamps needs --cache on" in line
