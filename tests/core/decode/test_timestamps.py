import numpy as np
import pytest

from core.decode.timestamps import apply_timestamp_rules, kept_length, split_segments
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer

TB = 50364


@pytest.fixture(scope="module")
def tok():
    return WhisperTokenizer.from_file(find_tokenizer())


def allowed(logits):
    return np.isfinite(logits)


def test_first_token_is_an_early_timestamp(tok):
    out = apply_timestamp_rules(np.zeros(51865, np.float32), [], tok.special)
    assert not allowed(out)[:TB].any() and allowed(out)[TB:TB + 51].all() and not allowed(out)[TB + 51:].any()


def test_open_timestamp_allows_only_timestamps_or_eot_and_time_never_decreases(tok):
    hello = tok.encode(" hello")[0]
    logits = np.zeros(51865, np.float32)
    logits[tok.special.eot] = 10.0  # stronger than all timestamps together, so EOT stays allowed
    out = apply_timestamp_rules(logits, [TB, hello, TB + 40], tok.special)
    ok = allowed(out)
    assert not ok[:tok.special.eot].any() and ok[tok.special.eot]
    assert not ok[TB:TB + 40].any() and ok[TB + 40:].all()


def test_closed_pair_forces_text(tok):
    hello = tok.encode(" hello")[0]
    out = apply_timestamp_rules(np.zeros(51865, np.float32), [TB, hello, TB + 40, TB + 40], tok.special)
    assert not allowed(out)[TB:].any() and allowed(out)[hello]


def test_split_segments_and_seek(tok):
    a, b = tok.encode(" one two"), tok.encode(" three")
    tokens = [TB] + a + [TB + 50, TB + 50] + b + [TB + 120]
    segs, seek = split_segments(tokens, tok, offset_s=30.0, segment_frames=3000)
    assert [(s.start, s.end, s.text) for s in segs] == [(30.0, 31.0, " one two"), (31.0, 32.4, " three")]
    assert seek == 3000  # ends on a single timestamp: the whole window is done
    segs, seek = split_segments(tokens + [TB + 120] + tok.encode(" four"), tok, 0.0, 3000)
    assert seek == 120 * 2 and len(segs) == 2  # unfinished text: the next window starts at the last timestamp
    segs, seek = split_segments(tokens + [TB + 120], tok, 0.0, 3000)
    assert seek == 120 * 2 and len(segs) == 2  # ends on a closed pair (then EOT): the next window starts there


def test_timestamps_outweighing_every_text_token_force_a_timestamp(tok):
    hello = tok.encode(" hello")[0]
    logits = np.zeros(51865, np.float32)
    logits[hello] = 5.0  # beats each timestamp alone but not their sum (log 1501 > 7)
    out = apply_timestamp_rules(logits, [TB, hello], tok.special)
    assert not allowed(out)[:TB].any()


def test_segments_never_end_after_the_audio(tok):
    tokens = [TB] + tok.encode(" hello world") + [TB + 100]  # <|2.00|> on a 1.4 s window
    segs, _ = split_segments(tokens, tok, offset_s=0.0, segment_frames=140)
    assert [(s.start, s.end) for s in segs] == [(0.0, 1.4)]


def test_kept_length_leaves_out_only_an_unfinished_last_segment(tok):
    a, b, c = tok.encode(" one two"), tok.encode(" three"), tok.encode(" four")
    done = [TB] + a + [TB + 50, TB + 50] + b + [TB + 120]
    assert kept_length(done, tok) == len(done)                             # ends on a single timestamp
    cut = done + [TB + 120] + c
    assert kept_length(cut, tok) == len(done) and tok.decode(cut[:kept_length(cut, tok)]) == " one two three"
    assert kept_length(done[:-1] + [TB + 120, TB + 120], tok) == len(done)  # a trailing pair: its opener goes
    plain = [TB] + a                                                        # no pair: one segment, all kept
    assert kept_length(plain, tok) == len(plain) and kept_length(a, tok) == len(a) and kept_length([], tok) == 0


def test_the_timestamp_mass_rule_decides_as_whispers_log_softmax_does(tok):
    """whisper: logsumexp(logprobs[tb:]) > max(logprobs[:tb]) on the log-softmax of the rule-applied logits."""
    hello = tok.encode(" hello")[0]
    rng = np.random.default_rng(7)
    decided = []
    for shift in np.linspace(-4.0, 4.0, 41):
        logits = (rng.standard_normal(51865) * 2).astype(np.float32)
        logits[TB:] += shift
        x = logits.astype(np.float64)
        x[TB] = -np.inf          # after "<|0.00|> hello" the only other rule: time never goes backwards
        lp = x - np.logaddexp.reduce(x)
        expect_blocked = np.logaddexp.reduce(lp[TB:]) > lp[:TB].max()
        out = apply_timestamp_rules(logits, [TB, hello], tok.special)
        decided.append(not np.isfinite(out[:TB]).any())
        assert decided[-1] == expect_blocked
    assert set(decided) == {True, False}     # the sweep crosses the rule's threshold
