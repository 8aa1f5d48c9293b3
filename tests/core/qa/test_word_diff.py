"""The word-level diff against the reference: jiwer's alignment, marked in HTML, adding up to the WER/CER."""
import pytest

from core.qa.scoring import error_rate
from core.qa.word_diff import counts, diff_html, word_diff


def test_substitution_deletion_and_insertion_are_told_apart():
    ops = word_diff("And so, my fellow Americans: ask not", "and so my yellow Americans ask not now")
    assert [(d.op, d.ref, d.hyp) for d in ops] == [
        ("equal", ("and", "so", "my"), ("and", "so", "my")), ("substitute", ("fellow",), ("yellow",)),
        ("equal", ("americans", "ask", "not"), ("americans", "ask", "not")), ("insert", (), ("now",))]
    ops = word_diff("ask not what your country", "ask what your country")
    assert [d.op for d in ops] == ["equal", "delete", "equal"] and ops[1].ref == ("not",)


@pytest.mark.parametrize("ref, hyp, lang", [
    ("the quick brown fox jumps", "a quick fox jumped over it", "en"),
    ("甚至出现交易几乎停滞的情况", "甚至出现交易停滞了的情况", "zh"),
    ("hello world", "", "en"),
])
def test_the_marks_add_up_to_the_error_rate(ref, hyp, lang):
    by_char = lang == "zh"
    n = counts(word_diff(ref, hyp, by_char))
    units = len(ref.replace(" ", "")) if by_char else len(ref.split())
    assert sum(n.values()) / units == pytest.approx(error_rate(ref, hyp, lang))


def test_cer_languages_are_diffed_by_character():
    ops = word_diff("甚至出现", "甚出现了", by_char=True)
    assert [(d.op, "".join(d.ref), "".join(d.hyp)) for d in ops] == [
        ("equal", "甚", "甚"), ("delete", "至", ""), ("equal", "出现", "出现"), ("insert", "", "了")]
    assert diff_html("甚至出现", "甚出现了", by_char=True).startswith("甚<del>至</del>出现<ins>了</ins>")


def test_html_marks_each_kind_and_escapes_the_text():
    html = diff_html("a <b> c d", "a <x> c e d")
    assert html.startswith('a <span class="sub"><del>b</del><ins>x</ins></span> c <ins>e</ins> d')
    assert "(1 substituted, 0 deleted, 1 inserted words)" in html
    assert "<b>" not in diff_html("tom & <jerry>", "tom <script>")     # normalised: no markup survives
    assert diff_html("", "").startswith(" <span") and "0 substituted" in diff_html("", "")
