"""What a decoding step does with its logits: the logit rules (suppressed tokens, timestamp rules, the temperature),
the top-k pick with its log-probabilities, and the language read off the SOT step's logits."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.decode.options import DecodeOptions
from core.decode.timestamps import apply_timestamp_rules
from core.model.tokenizer import WhisperTokenizer


def log_softmax(x: np.ndarray) -> np.ndarray:
    """float32 over the vocabulary's logits (float64 costs ~1 ms a step); the sum accumulates in float64."""
    x = np.asarray(x, dtype=np.float32)
    m = x.max()
    return x - (m + np.float32(np.log(np.exp(x - m).sum(dtype=np.float64))))


def top_k(x: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, largest first (ties: the lower index), leaving `x` as it was.
    For a small k, k argmax passes over 51865 logits take ~30 µs where argpartition takes ~650 µs."""
    if k > 8:
        top = np.argpartition(-x, k)[:k]
        return top[np.argsort(-x[top], kind="stable")]
    out, saved = np.empty(k, np.intp), np.empty(k, x.dtype)
    for j in range(k):
        out[j] = x.argmax()
        saved[j] = x[out[j]]
        x[out[j]] = -np.inf
    for j in reversed(range(k)):
        x[out[j]] = saved[j]
    return out


@dataclass
class Pick:
    """One step's choice: the top-k token ids (best first), their log-probabilities, EOT's; the entropy of
    the whole distribution and its log-normaliser (a sampled token's logprob is its logit minus `norm`)."""
    top: np.ndarray
    logprobs: np.ndarray
    eot_logprob: float
    entropy: float = 0.0
    norm: float = 0.0


class LogitRules:
    """Whisper's standard rules: no blank or EOT first, no non-speech symbols, no special tokens."""

    def __init__(self, tokenizer: WhisperTokenizer, options: DecodeOptions, n_vocab: int):
        sp = tokenizer.special
        suppress = np.zeros(n_vocab, bool)
        suppress[tokenizer.non_speech_tokens] = True
        suppress[sp.sot:] = True  # every special token but EOT (timestamps too, unless asked for)
        if options.timestamp_tokens:
            suppress[sp.timestamp_begin:] = False
        if options.suppress_eot:
            suppress[sp.eot] = True
        # A copy and a store at ~1700 indices: adding a -inf/0 vector read 200 KB more, cold after every graph call.
        self.suppressed = np.flatnonzero(suppress)
        self.blank = tokenizer.encode(" ") + [sp.eot]
        self.special = tokenizer.special
        self.timestamps, self.k = options.timestamp_tokens, options.top_k
        # Reused every step: a fresh 200 KB array per step costs page faults between two graph calls.
        self._x = np.empty(n_vocab, np.float32)
        self._seen: tuple[np.ndarray, list[int]] | None = None    # what `pick` last saw, for `sample`

    def apply(self, logits: np.ndarray, sampled: list[int]) -> np.ndarray:
        """The rule-applied logits, in a buffer the next call overwrites."""
        x = self._x
        np.copyto(x, logits, casting="same_kind")
        x[self.suppressed] = -np.inf
        if not sampled:
            x[self.blank] = -np.inf
        if self.timestamps:
            apply_timestamp_rules(x, sampled, self.special)
        return x

    def pick(self, logits: np.ndarray, sampled: list[int]) -> Pick:
        """Greedy choice over the rule-applied logits, with the log-softmax of only what is reported:
        the same values as `log_softmax(x)[ids]`, without writing the whole vocabulary out."""
        x = self.apply(logits, sampled)
        self._seen = (logits, sampled)
        top = top_k(x, self.k)
        m = x[top[0]]
        chosen, eot = x[top], x[self.special.eot]
        if chosen[-1] == -np.inf:   # the rules left fewer than k tokens possible: report only those
            top = top[chosen > -np.inf]
            chosen = x[top]
        e = np.exp(np.subtract(x, m, out=x), out=x)      # in place: x is not needed again (`sample` re-applies)
        total = e.sum()                                    # float32 pairwise sum: exact enough, half the time
        norm = m + np.float32(np.log(total))
        pick = Pick(top, chosen - norm, float(eot - norm), norm=float(norm))
        # H = log Z - sum(e * (x - m)) / Z with Z = sum(e): one dot, no second exp. Where a rule set x to -inf,
        # e is 0; everywhere else x equals the raw logit (the rules only set -inf), so the dot runs over the
        # finite raw logits and no pass is spent keeping 0 * -inf from making a NaN.
        pick.entropy = max(0.0, float(np.log(total)) - (float(np.dot(e, logits)) - float(m) * float(total))
                           / float(total))
        return pick

    def sample(self, pick: Pick, temperature: float, rng: np.random.Generator) -> tuple[int, float]:
        """A token drawn from softmax(logits / T) of the logits `pick` just saw (whisper's fallback sampling),
        and its logprob at T=1 (what whisper sums for avg_logprob)."""
        x = self.apply(*self._seen)
        m = x[pick.top[0]]
        e = np.exp(np.multiply(x - m, np.float32(1 / temperature)))
        cdf = np.cumsum(e, dtype=np.float64)
        tok = int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), len(cdf) - 1))
        return tok, float(x[tok] - pick.norm)


def detect_language(tokenizer: WhisperTokenizer, sot_logits: np.ndarray) -> tuple[str, dict[str, float]]:
    ids = np.array(list(tokenizer.languages.values()))
    lp = log_softmax(sot_logits[ids])
    order = np.argsort(-lp)
    codes = list(tokenizer.languages)
    probs = {codes[i]: float(np.exp(lp[i])) for i in order[:5]}
    return codes[order[0]], probs
