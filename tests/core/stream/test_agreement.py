"""LocalAgreement-2 on crafted hypotheses: what two passes agree on is committed, nothing else."""
from core.decode.word_timing import Word
from core.stream.agreement import LocalAgreement, agreed_prefix


def words(text: str, start: float = 0.0, step: float = 0.5) -> list[Word]:
    return [Word(" " + w, round(start + i * step, 2), round(start + (i + 1) * step, 2), 0.9)
            for i, w in enumerate(text.split())]


def texts(ws: list[Word]) -> str:
    return "".join(w.word for w in ws).strip()


def test_the_first_hypothesis_commits_nothing_the_second_commits_the_common_prefix():
    la = LocalAgreement()
    assert la.insert(words("and so my fellow")) == []
    assert texts(la.tentative) == "and so my fellow"
    committed = la.insert(words("and so my fellow americans ask"))
    assert texts(committed) == "and so my fellow"
    assert texts(la.tentative) == "americans ask" and la.last_end == 2.0


def test_a_disagreement_stops_the_commit_at_the_first_differing_word():
    la = LocalAgreement()
    la.insert(words("ask not what your"))
    assert texts(la.insert(words("ask knot what your country"))) == "ask"
    assert texts(la.tentative) == "knot what your country"
    # the third pass agrees with the second, not with the first
    assert texts(la.insert(words("ask knot what your country can"))) == "knot what your country"


def test_case_and_punctuation_do_not_block_agreement():
    la = LocalAgreement()
    la.insert(words("hello world"))
    assert texts(la.insert(words("Hello, world. How"))) == "Hello, world."
    assert agreed_prefix(words("it's fine"), words("It's fine!")) == 2


def test_committed_words_at_the_start_of_a_hypothesis_are_not_committed_twice():
    la = LocalAgreement()
    la.insert(words("one two three"))
    la.insert(words("one two three four"))          # commits one two three
    assert texts(la.insert(words("one two three four five"))) == "four"
    assert texts(la.committed) == "one two three four"
    # re-transcribed differently and shifted in time: the overlap is found by time and by n-gram
    la2 = LocalAgreement()
    la2.insert(words("one two three"))
    la2.insert(words("one two three four"))
    shifted = [Word(" won", 0.0, 0.45, 0.9), Word(" two", 0.5, 0.95, 0.9)] + words("three four five", start=1.45)
    assert texts(la2.unseen(shifted)) == "four five"      # "three" passes the time filter, the n-gram drops it


def test_flush_commits_the_whole_final_hypothesis_and_reset_starts_a_new_buffer():
    la = LocalAgreement()
    la.insert(words("congratulations you have"))
    assert texts(la.flush(words("congratulations you have successfully installed"))) == \
        "congratulations you have successfully installed"
    assert la.tentative == []
    la.reset()
    assert la.committed == [] and la.last_end == 2.5
    # with nothing new, flush commits the tentative words of the last pass
    la.insert(words("the asterisk", start=3.0))
    assert texts(la.flush()) == "the asterisk"


def test_forget_before_drops_committed_words_that_left_the_buffer():
    la = LocalAgreement()
    la.insert(words("a b c d"))
    la.insert(words("a b c d e"))
    la.forget_before(1.0)
    assert texts(la.committed) == "c d"
    # the buffer now starts at 1.0: the next hypothesis begins at "c"
    assert texts(la.insert(words("c d e f", start=1.0))) == "e"


def test_a_word_stretched_over_committed_words_the_decoder_skipped_is_new_and_not_committed_twice():
    # The buffer still begins with committed words, but the pass wrote only what follows them, and word timing
    # stretched its first word back over them (a pass of the join of the bundled clips did this: " He" 7.34-11.02 s).
    la = LocalAgreement()
    la.flush(words("ask what you can do for your country.", start=6.36))          # committed up to 10.36
    skipped = [Word(" He", 7.34, 11.02, 0.9)] + words("turned sharply", start=11.02)
    assert texts(la.unseen(skipped)) == "He turned sharply"
    la.flush([skipped[0]])
    # the next pass writes " He" stretched again: the n-gram of what was committed drops it
    again = [Word(" He", 7.44, 11.74, 0.9)] + words("turned sharply and", start=11.74)
    assert texts(la.unseen(again)) == "turned sharply and"


def test_a_hypothesis_that_hears_the_committed_start_another_way_goes_on_after_its_last_committed_words():
    # Committed " did opening hours" (ending 39.64 s); the next pass heard the sentence's start another way and ended
    # " hours" at 39.54 s, so " during" (39.54 s) fell to the time filter. The committed words' tail anchors it.
    la = LocalAgreement()
    la.flush([Word(" did", 38.22, 38.76, 0.9), Word(" opening", 38.76, 39.22, 0.9), Word(" hours", 39.22, 39.64, 0.9)])
    heard = [Word(" from", 37.80, 38.04, 0.9), Word(" is", 38.68, 38.86, 0.9), Word(" opening", 38.86, 39.22, 0.9),
             Word(" hours", 39.22, 39.54, 0.9)] + words("during the summer", start=39.54, step=0.3)
    assert texts(la.unseen(heard)) == "during the summer"
    # far from where they were heard, the same words are no anchor
    far = [Word(" opening", 30.0, 30.4, 0.9), Word(" hours", 30.4, 30.8, 0.9)] + words("during the", start=39.7)
    assert texts(la.unseen(far)) == "during the"
