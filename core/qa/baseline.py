"""Regressions against a baseline: an earlier run's qa.json, clip by clip.

Marks: `regressed` (the clip's WER or CER rose, or it no longer decodes), `slower` (its p50 ms/token
rose by more than SlowerRule's percentage AND its milliseconds: timing on a shared board or PC is
noisy, so both must be exceeded), `changed` (its stop reason changed). Clips are matched by
(device, name); when the baseline and the run each cover one device, by name alone, so a board can be
compared with a report made under another URL."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import WhisperKVError
from core.qa.run import ClipResult

MARKS = ("regressed", "slower", "changed")
EPSILON = 1e-6      # error rates are stored rounded to 4 decimals; equal ones must compare equal


class BaselineError(WhisperKVError):
    code = "bad_baseline"


@dataclass(frozen=True)
class SlowerRule:
    pct: float = 100.0     # p50 ms/token must rise by more than this percentage ... (docs/qa.md says why)
    ms: float = 10.0       # ... and by more than this many milliseconds

    def is_slower(self, old: float | None, new: float | None) -> bool:
        if old is None or new is None:
            return False
        return new > old * (1 + self.pct / 100) and new - old > self.ms

    def describe(self) -> str:
        return f"p50 ms/token up by more than {self.pct:g} % and more than {self.ms:g} ms"


@dataclass
class Comparison:
    marks: list[str] = field(default_factory=list)
    error_rate: float | None = None          # the baseline's values, for the report
    per_token_ms_p50: float | None = None
    stop_reason: str = ""


def load_baseline(path: str | Path) -> list[dict]:
    """The clips of a qa.json written by `whisperkv qa` (a directory means its qa.json)."""
    path = Path(path).expanduser()
    if path.is_dir():
        path = path / "qa.json"
    fix = "pass the qa.json that an earlier `whisperkv qa --out DIR` wrote, e.g. --baseline DIR/qa.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"baseline not found: {path}", fix) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"baseline {path} is not a qa.json report ({exc})", fix) from None
    clips = doc.get("clips") if isinstance(doc, dict) else None
    if not isinstance(clips, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str) and
                                              "error_rate" in c for c in clips):
        raise BaselineError(f"baseline {path} is not a qa.json report (no list of scored clips)", fix)
    return clips


def compare_clip(old: dict, new: ClipResult, rule: SlowerRule) -> Comparison:
    marks = []
    old_rate = old.get("error_rate")
    if new.error_rate is None:
        if old_rate is not None:
            marks.append("regressed")
    elif old_rate is not None and new.error_rate > old_rate + EPSILON:
        marks.append("regressed")
    if rule.is_slower(old.get("per_token_ms_p50"), new.per_token_ms_p50):
        marks.append("slower")
    if old.get("stop_reason", "") != new.stop_reason:
        marks.append("changed")
    return Comparison(marks, old_rate, old.get("per_token_ms_p50"), old.get("stop_reason", ""))


def compare(old_clips: list[dict], runs, rule: SlowerRule) -> dict[tuple[str, str], Comparison]:
    """(device, clip name) → Comparison for every clip of `runs` (core.qa.farm.DeviceRun) the
    baseline has; clips it lacks get no entry (the report calls them new)."""
    old_devices = {c.get("device", "") for c in old_clips}
    by_name = len(old_devices) <= 1 and len(runs) == 1
    old = {(None if by_name else c.get("device", ""), c["name"]): c for c in old_clips}
    out = {}
    for run in runs:
        for r in run.result.results:
            match = old.get((None if by_name else run.device, r.name))
            if match is not None:
                out[(run.device, r.name)] = compare_clip(match, r, rule)
    return out


def describe(c: Comparison, new: ClipResult) -> list[str]:
    """One phrase per mark, old → new, e.g. "regressed: WER 0.000 → 0.045"."""
    said = {"regressed": f"regressed: {new.metric.upper()} {_num(c.error_rate, '.3f')} → {_num(new.error_rate, '.3f')}",
            "slower": f"slower: p50 {_num(c.per_token_ms_p50)} → {_num(new.per_token_ms_p50)} ms/token",
            "changed": f"changed: stop {c.stop_reason or '-'} → {new.stop_reason or '-'}"}
    return [said[m] for m in c.marks]


def _num(v, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def settings(path: str | Path, rule: SlowerRule, fail_on: tuple[str, ...]) -> dict:
    """What the report says about the comparison (QAReport.baseline)."""
    return {"path": str(path), "fail_on": list(fail_on), "slower_pct": rule.pct, "slower_ms": rule.ms,
            "slower": rule.describe()}
