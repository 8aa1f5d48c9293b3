"""The reference against the transcript, word by word (character by character for CER languages),
from jiwer's alignment: the same alignment the WER/CER is counted on, so the marks add up to it."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from core.qa.scoring import normalize

LEGEND = ('<span class="legend"><span class="sub"><del>substituted</del><ins>with</ins></span> '
          '<del>deleted</del> <ins>inserted</ins></span>')


@dataclass(frozen=True)
class DiffOp:
    op: str                    # "equal" | "substitute" | "delete" | "insert", as jiwer names them
    ref: tuple[str, ...]       # the reference's words (or characters) in this stretch
    hyp: tuple[str, ...]       # the transcript's


def word_diff(reference: str, hypothesis: str, by_char: bool = False) -> list[DiffOp]:
    """Both texts normalised as for scoring; by_char drops spaces, as CER does."""
    ref, hyp = normalize(reference), normalize(hypothesis)
    if by_char:
        ref, hyp = ref.replace(" ", ""), hyp.replace(" ", "")
    if not ref and not hyp:
        return []
    import jiwer  # on first use: the CLI imports this module at every start

    out = (jiwer.process_characters if by_char else jiwer.process_words)(ref, hyp)
    a, b = out.references[0], out.hypotheses[0]
    return [DiffOp(c.type, tuple(a[c.ref_start_idx:c.ref_end_idx]), tuple(b[c.hyp_start_idx:c.hyp_end_idx]))
            for c in out.alignments[0]]


def counts(ops: list[DiffOp]) -> dict[str, int]:
    """Words (characters) substituted, deleted and inserted."""
    n = {"substitute": 0, "delete": 0, "insert": 0}
    for d in ops:
        if d.op in n:
            n[d.op] += max(len(d.ref), len(d.hyp))
    return n


def diff_html(reference: str, hypothesis: str, by_char: bool = False) -> str:
    """Substitutions as the struck reference beside its replacement (class "sub"), deletions struck,
    insertions highlighted, then the counts."""
    ops = word_diff(reference, hypothesis, by_char)
    sep = "" if by_char else " "

    def text(words):
        return escape(sep.join(words))

    parts = []
    for d in ops:
        if d.op == "equal":
            parts.append(text(d.ref))
        elif d.op == "substitute":
            parts.append(f'<span class="sub"><del>{text(d.ref)}</del><ins>{text(d.hyp)}</ins></span>')
        elif d.op == "delete":
            parts.append(f"<del>{text(d.ref)}</del>")
        else:
            parts.append(f"<ins>{text(d.hyp)}</ins>")
    n = counts(ops)
    unit = "characters" if by_char else "words"
    tally = (f'<span class="muted">({n["substitute"]} substituted, {n["delete"]} deleted, '
             f'{n["insert"]} inserted {unit})</span>')
    return sep.join(parts) + " " + tally
