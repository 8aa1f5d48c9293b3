"""WER/CER scoring with one normalisation used everywhere (CLI, GUI, QA, tests)."""
from __future__ import annotations

import re
import unicodedata

CER_LANGUAGES = {"zh", "ja", "yue", "th", "lo", "my", "km"}  # written without spaces between words


def normalize(text: str) -> str:
    """Casefold, drop punctuation and symbols (keeping apostrophes inside words), collapse spaces."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(c)[0] in "PS" and c != "'" else c for c in text)
    text = re.sub(r"(?<!\w)'|'(?!\w)", " ", text)
    return " ".join(text.split())


def uses_cer(language: str) -> bool:
    return language in CER_LANGUAGES


def error_rate(reference: str, hypothesis: str, language: str = "en") -> float:
    """WER for space-delimited languages, CER (spaces ignored) for the others."""
    ref, hyp = normalize(reference), normalize(hypothesis)
    cer = uses_cer(language)
    if cer:
        ref, hyp = ref.replace(" ", ""), hyp.replace(" ", "")
    if not ref:
        return 0.0 if not hyp else 1.0
    import jiwer  # imported on first use: every CLI start imports this module

    return jiwer.cer(ref, hyp) if cer else jiwer.wer(ref, hyp)
