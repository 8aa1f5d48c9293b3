"""SRT/VTT of a run with word timings: phrases of its words, at most two lines of ~42 characters and 7 s a
cue (the JFK clip used to be one 11 s cue with a 107-character line)."""
from __future__ import annotations

import re

from app.runs import exports
from core.decode.subtitles import phrase_cues


def cue_blocks(srt: str) -> list[tuple[float, float, list[str]]]:
    def seconds(c: str) -> float:
        h, m, s = c.replace(",", ".").split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)
    blocks = []
    for block in srt.strip().split("\n\n"):
        _, times, *lines = block.splitlines()
        a, b = re.findall(r"\S+", times)[::2]
        blocks.append((seconds(a), seconds(b), lines))
    return blocks


def test_the_jfk_run_exports_short_cues_from_its_word_timings(en_window):
    run = en_window.run
    assert run.options.attention
    blocks = cue_blocks(exports.srt(run))
    assert len(blocks) >= 2
    for start, end, lines in blocks:
        assert 1 <= len(lines) <= 2 and all(len(line) <= 42 for line in lines)
        assert end - start <= 7.0 + 1e-6
    said = " ".join(" ".join(lines) for _, _, lines in blocks)
    assert said.split() == run.text().split()
    assert exports.vtt(run).startswith("WEBVTT")


def test_phrases_break_at_two_lines_at_seven_seconds_and_after_a_sentence():
    words = [{"word": f" word{i:02d}", "start": i * 0.5, "end": i * 0.5 + 0.4} for i in range(30)]
    cues = phrase_cues(words)
    assert all(c.end - c.start <= 7.0 and all(len(x) <= 42 for x in c.text.split("\n")) for c in cues)
    assert " ".join(c.text.replace("\n", " ") for c in cues) == " ".join(w["word"].strip() for w in words)
    slow = [{"word": " a", "start": 0.0, "end": 0.5}, {"word": " b", "start": 6.0, "end": 7.5}]
    assert [c.text for c in phrase_cues(slow)] == ["a", "b"]
    sentences = [{"word": " Stop.", "start": 0.0, "end": 0.5}, {"word": " Go", "start": 0.6, "end": 1.0}]
    assert [c.text for c in phrase_cues(sentences)] == ["Stop.", "Go"]
    zh = [{"word": ch, "start": i * 0.2, "end": i * 0.2 + 0.2} for i, ch in enumerate("甚至出现交易几乎停滞的情况")]
    assert [c.text for c in phrase_cues(zh)] == ["甚至出现交易几乎停滞的情况"]
