"""'Why did it stop' on synthetic token streams: EOT step, rivals, loops and the one-line verdict."""
from core.decode.diagnostics import (
    diagnose,
    diagnose_window,
    eot_token,
    find_loop,
    strongest_rival,
)
from core.decode.events import TokenEvent
from tests.conftest import special_tokens

EOT_TOKEN = special_tokens().eot


def steps(tokens, eot_probs=None, window=0, prefix=4):
    eot_probs = eot_probs or [0.01] * len(tokens)
    out = []
    for i, (tok, p) in enumerate(zip(tokens, eot_probs)):
        top = [(tok, -0.1), (EOT_TOKEN, -2.0), (tok + 1, -3.0)] if tok != EOT_TOKEN else \
            [(EOT_TOKEN, -0.03), (777, -3.5)]
        out.append(TokenEvent(window=window, step=i, token=tok, text="x", logprob=top[0][1], eot_prob=p,
                              top=top, cache_len=prefix + i, cache_bytes=0, ms=1.0))
    return out


def test_clean_eot_names_the_step_and_probability():
    s = steps([10, 11, 12, EOT_TOKEN], [0.0, 0.02, 0.1, 0.97])
    d = diagnose(s, {0: "eot"})
    assert d.verdict == "EOT at step 3 (p=0.97)"
    w = d.windows[0]
    assert (w.eot_step, w.eot_prob, w.loop) == (3, 0.97, None)
    assert w.eot_trajectory == [0.0, 0.02, 0.1, 0.97]
    assert [r.token for r in w.rivals] == [10, 11, 12, 777]   # never EOT itself


def test_strongest_rival_skips_eot_at_the_top():
    ev = steps([EOT_TOKEN])[0]
    assert (strongest_rival(ev, EOT_TOKEN).token, strongest_rival(ev, EOT_TOKEN).logprob) == (777, -3.5)
    ev.top = [(EOT_TOKEN, 0.0)]
    assert strongest_rival(ev, EOT_TOKEN).token == -1


def test_eot_is_read_off_the_window_that_stopped_at_it():
    s = steps([10, 11], window=0) + steps([12, EOT_TOKEN], window=1)
    assert eot_token(s, {0: "max_tokens", 1: "eot"}) == EOT_TOKEN
    assert eot_token(s, {0: "max_tokens", 1: "cancelled"}) is None
    assert eot_token([], {0: "eot"}) is None


def test_loop_into_the_cache_ceiling():
    intro = list(range(100, 161))                   # 61 distinct tokens: steps 0..60
    looped = intro + [7, 8, 9, 10] * 96             # then a 4-gram from step 61 until the cache is full
    s = steps(looped)
    d = diagnose(s, {0: "cache_full"})
    assert d.loop.n == 4 and d.loop.start_step == 61 and d.loop.end_step == len(looped) - 1
    assert d.loop.ngram == [7, 8, 9, 10] and d.loop.repeats == 96
    assert d.verdict == f"cache_full at {s[-1].cache_len} after a 4-gram loop from step 61"


def test_loop_period_is_the_shortest():
    loop = find_loop([1, 2, 3] + [5, 6] * 10)
    assert (loop.n, loop.start_step, loop.span) == (2, 3, 20)


def test_short_repeats_are_speech_not_loops():
    assert find_loop([1, 2, 2, 2, 3]) is None                 # "ha ha ha"
    assert find_loop([1, 2, 3, 1, 2, 3, 4]) is None           # twice is not a loop
    assert find_loop([9] * 12).n == 1


def test_max_tokens_and_cancel_and_running():
    d = diagnose(steps(list(range(200, 224)), [0.01] * 10 + [0.3] + [0.01] * 13), {0: "max_tokens"})
    assert d.verdict == "max_tokens (24) reached at step 23; max p(EOT) 0.30 at step 10"
    assert diagnose(steps([1, 2, 3]), {0: "cancelled"}).verdict == "cancelled at step 2"
    assert diagnose([], {0: "cancelled"}).verdict == "cancelled before the first token"
    assert diagnose(steps([1, 2]), {}).verdict == "decoding, step 1"
    assert diagnose([], {}).verdict == "no tokens decoded"


def test_cache_full_without_loop_says_so():
    d = diagnose_window(steps(list(range(1000, 1444))), "cache_full")
    assert d.verdict.startswith("cache_full at 447 with no loop; max p(EOT) 0.01")


def test_worst_window_decides_and_is_named():
    s = steps(list(range(100, 110)) + [4, 5] * 30, window=0) + steps([1, 2, EOT_TOKEN], [0, 0, 0.9], window=1)
    d = diagnose(s, {0: "max_tokens", 1: "eot"})
    assert d.verdict.startswith("window 0: max_tokens (70) reached at step 69 after a 2-gram loop from step 10")
    assert diagnose(steps([EOT_TOKEN], [0.8]) + steps([3, EOT_TOKEN], [0, 0.9], window=1),
                    {0: "eot", 1: "eot"}).verdict == "window 1: EOT at step 1 (p=0.90)"


def test_silent_window_is_flagged():
    d = diagnose(steps([5, EOT_TOKEN], [0, 0.99]), {0: "eot"}, no_speech={0: (True, 0.83)})
    assert d.verdict == "EOT at step 1 (p=0.99); no speech (p=0.83), text hidden"
    assert d.to_dict()["windows"][0]["silent"] is True


def test_trailing_silent_window_does_not_hide_the_speech_verdict():
    s = steps([3, 4, EOT_TOKEN], [0, 0, 0.95]) + steps([5, EOT_TOKEN], [0, 0.5], window=1)
    d = diagnose(s, {0: "eot", 1: "eot"}, no_speech={0: (False, 0.01), 1: (True, 0.7)})
    assert d.verdict == "window 0: EOT at step 2 (p=0.95)"
