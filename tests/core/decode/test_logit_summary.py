"""LogitRules.pick takes a step graph's summary (core.model.backend.StepSummary) only when the static rules
alone apply, asks the stepper for the next steps' summaries under those rules, and otherwise passes over the
logits in NumPy as before."""
import numpy as np
import pytest

from core.decode.decoding import LogitRules
from core.decode.options import DecodeOptions
from core.model.backend import SUPPRESSED, StepSummary


class FakeStepper:
    """Hands back a fixed summary, and records what it was asked for."""

    def __init__(self, summary):
        self.summary, self.asked = summary, []

    def summary_for(self, bias, k):
        self.asked.append((bias, k))
        return self.summary


@pytest.fixture
def logits(model):
    return np.random.default_rng(0).standard_normal(model.backend.dims.n_vocab).astype(np.float32) * 4


def summary_of(logits, rules, bias):
    """What the graph computes, in float64 here."""
    x = logits.astype(np.float64) + bias
    lp = x - np.logaddexp.reduce(x)
    top = np.argsort(-x, kind="stable")[:rules.k]
    return StepSummary(top, x[top].astype(np.float32), lp[top].astype(np.float32), float(-(np.exp(lp) * lp).sum()))


@pytest.mark.parametrize("suppress_eot", [False, True])
def test_after_the_first_step_the_summary_is_the_pick(model, logits, suppress_eot):
    rules = LogitRules(model.tokenizer, DecodeOptions(suppress_eot=suppress_eot), len(logits))
    stepper = FakeStepper(None)
    first = rules.pick(logits, [], stepper)          # the blank rule: NumPy, but the next steps are asked for
    (bias, k), = stepper.asked
    assert k.tolist() == [rules.k] and set(np.flatnonzero(bias)) == set(rules.suppressed)
    assert np.all(bias[rules.suppressed] == SUPPRESSED)
    assert first.top.tolist() == LogitRules(model.tokenizer, DecodeOptions(suppress_eot=suppress_eot),
                                            len(logits)).pick(logits, []).top.tolist()

    stepper.summary = summary_of(logits, rules, bias)
    got, numpy = rules.pick(logits, [1], stepper), rules.pick(logits, [1])
    assert got.top is stepper.summary.top and got.logprobs is stepper.summary.top_logprobs
    assert got.top.tolist() == numpy.top.tolist()
    np.testing.assert_allclose(got.logprobs, numpy.logprobs, atol=1e-5)
    assert abs(got.norm - numpy.norm) < 1e-5 and abs(got.entropy - numpy.entropy) < 1e-3
    assert got.eot_logprob == numpy.eot_logprob == -np.inf if suppress_eot else \
        abs(got.eot_logprob - numpy.eot_logprob) < 1e-5


def test_timestamp_rules_and_steppers_without_summaries_keep_the_numpy_path(model, logits):
    timed = LogitRules(model.tokenizer, DecodeOptions(timestamps=True), len(logits))
    stepper = FakeStepper(StepSummary(np.array([0]), np.zeros(1), np.zeros(1), 0.0))
    assert timed.pick(logits, [1], stepper).top.tolist() == timed.pick(logits, [1]).top.tolist()
    assert stepper.asked == []
    plain = LogitRules(model.tokenizer, DecodeOptions(), len(logits))
    assert plain.pick(logits, [1], object()).top.tolist() == plain.pick(logits, [1]).top.tolist()
