"""A stream's text against an offline transcription of the same audio (`whisperkv transcribe`): the WER
between them, and the share of committed words that disagree with it.

A committed word can never be taken back, so the second figure counts the words a listener saw committed
that the offline transcript does not have in that place: jiwer aligns the two (normalised as every score
here is, core/qa/scoring.py) and the committed words in substitutions and insertions disagree. Offline words
the stream left out are not committed words; they count in the WER only.
"""
from __future__ import annotations

import jiwer

from core.qa.scoring import error_rate, normalize


def disagreeing_share(offline: str, committed: str) -> float | None:
    """Committed words that disagree with the offline transcript, over all committed words (None: none)."""
    ref, hyp = normalize(offline), normalize(committed)
    if not hyp:
        return None
    if not ref:
        return 1.0
    chunks = jiwer.process_words(ref, hyp).alignments[0]
    bad = sum(c.hyp_end_idx - c.hyp_start_idx for c in chunks if c.type in ("substitute", "insert"))
    return round(bad / len(hyp.split()), 4)


def against_offline(offline: str, committed: str, language: str = "en") -> dict:
    return {"wer_vs_offline": round(error_rate(offline, committed, language), 4),
            "committed_disagreeing": disagreeing_share(offline, committed)}
