"""QA suites: a TOML file of clips, each with its reference text, language and error-rate limit.

    name = "bundled clips"              # optional
    references = "transcripts.json"     # optional: {"file.wav": {"reference": ..., "language": ...}}

    [defaults]                          # optional: any clip key, for every clip
    expect_stop = "eot"

    [[clip]]
    audio = "test_en.wav"               # relative to the suite file, or absolute
    language = "en"
    reference = "And so my fellow Americans ..."
    max_wer = 0.10                      # max_cer for languages written without spaces (zh, ja, ...)

A clip, or [defaults] for every clip, may also hold the decoder to a speed and to the NPU (core/qa/floor.py):

    min_tokens_per_s = 20.0             # fail a clip whose decoder ran slower
    require_npu = true                  # fail a clip whose graphs ran, wholly or in part, on the CPU

Every problem is reported as a SuiteError naming the clip, the key and the fix.
"""
from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from core.decode.events import STOP_REASONS
from core.decode.options import MAX_TOKENS, DecodeOptions
from core.errors import WhisperKVError
from core.qa.scoring import uses_cer

SUITE_KEYS = {"name", "references", "defaults", "clip"}
CLIP_TYPES = {
    "audio": str, "name": str, "language": str, "reference": str, "max_wer": float, "max_cer": float,
    "task": str, "max_tokens": int, "timestamps": bool, "suppress_eot": bool, "expect_stop": (str, list),
    "min_tokens_per_s": float, "require_npu": bool,
}


class SuiteError(WhisperKVError):
    code = "bad_suite"


@dataclass(frozen=True)
class Clip:
    name: str
    audio: Path
    language: str
    reference: str
    metric: str                   # "wer" or "cer", from the language
    max_error: float
    task: str = "transcribe"
    max_tokens: int = MAX_TOKENS
    timestamps: bool = False
    suppress_eot: bool = False
    expect_stop: tuple[str, ...] = ()   # allowed stop reasons; empty: any
    min_tokens_per_s: float | None = None   # the decoder's speed floor; None: none
    require_npu: bool = False               # fail it when its graphs ran on the CPU

    def options(self, cache: bool = True, top_k: int = 5, timestamps: bool | None = None) -> DecodeOptions:
        return DecodeOptions(language=self.language, task=self.task, cache=cache, max_tokens=self.max_tokens,
                             top_k=top_k, timestamps=self.timestamps if timestamps is None else timestamps,
                             suppress_eot=self.suppress_eot)


@dataclass(frozen=True)
class Suite:
    path: Path
    name: str
    clips: tuple[Clip, ...]


def load_suite(path: str | Path) -> Suite:
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise SuiteError(f"suite file not found: {path}", "check the path, e.g. resources/audio/suite.toml")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path.name} is not valid TOML: {exc}", "fix the line it names") from exc
    unknown = set(doc) - SUITE_KEYS
    if unknown:
        raise SuiteError(f"{path.name}: unknown top-level key {sorted(unknown)[0]!r}",
                         f"use {', '.join(sorted(SUITE_KEYS))}; clips go in [[clip]] tables")
    entries = doc.get("clip")
    if not isinstance(entries, list) or not entries:
        raise SuiteError(f"{path.name} lists no clips", 'add one [[clip]] table per audio file, with audio = "x.wav"')
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise SuiteError(f"{path.name}: defaults must be a table", "write it as [defaults] with clip keys below it")
    references = _references(path, doc.get("references"))
    if not all(isinstance(e, dict) for e in entries):
        raise SuiteError(f"{path.name}: clip must be an array of tables", "write each clip as a [[clip]] table")
    clips = tuple(_clip(path, i, defaults | entry, references) for i, entry in enumerate(entries, 1))
    names = [c.name for c in clips]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SuiteError(f"{path.name}: two clips are named {dupes[0]!r}", "give each clip a distinct name = ...")
    return Suite(path, str(doc.get("name") or path.stem), clips)


def _references(suite: Path, name) -> dict:
    if name is None:
        return {}
    file = _resolve(suite, str(name))
    try:
        refs = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SuiteError(f"references file not found: {file}", "paths are relative to the suite file") from None
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{file.name} is not valid JSON: {exc}", "fix the line it names") from exc
    if not isinstance(refs, dict):
        raise SuiteError(f"{file.name} must map audio file names to references", '{"a.wav": {"reference": "..."}}')
    return {k: v if isinstance(v, dict) else {"reference": v} for k, v in refs.items()}


def _resolve(suite: Path, name: str) -> Path:
    p = Path(name).expanduser()
    return p if p.is_absolute() else suite.parent / p


def _clip(suite: Path, index: int, entry: dict, references: dict) -> Clip:
    where = f"{suite.name}, clip {index}" + (f" ({entry['audio']})" if isinstance(entry.get("audio"), str) else "")

    def fail(problem: str, fix: str):
        raise SuiteError(f"{where}: {problem}", fix)

    for key, value in entry.items():
        want = CLIP_TYPES.get(key)
        if want is None:
            fail(f"unknown key {key!r}", f"use one of: {', '.join(CLIP_TYPES)}")
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            value = entry[key] = float(value)
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            fail(f"{key} has the wrong type ({type(value).__name__})", f"{key} takes a {_type_name(want)}")
    if "audio" not in entry:
        fail("has no audio", 'add audio = "file.wav" (relative to the suite file, or absolute)')
    audio = _resolve(suite, entry["audio"])
    if not audio.is_file():
        fail(f"audio not found: {audio}", "fix the path; relative paths start at the suite file's folder")
    known = references.get(Path(entry["audio"]).name, {})
    language = entry.get("language") or known.get("language") or ""
    reference = entry.get("reference", known.get("reference"))
    if not language or language == "auto":
        fail("has no language", 'add language = "en" (or zh, ...): it picks WER or CER and the decoder prompt')
    if not isinstance(reference, str) or not reference.strip():
        fail("has no reference text", 'add reference = "what is said in the clip"')
    metric = "cer" if uses_cer(language) else "wer"
    other = "wer" if metric == "cer" else "cer"
    if f"max_{other}" in entry:
        fail(f"max_{other} given, but {language} is scored by {metric.upper()}", f"use max_{metric} instead")
    if f"max_{metric}" not in entry:
        fail("has no error-rate limit", f"add max_{metric} = 0.10 (the highest {metric.upper()} that passes)")
    max_error = entry[f"max_{metric}"]
    if not 0 <= max_error:
        fail(f"max_{metric} is negative", "use a fraction such as 0.10")
    expect = entry.get("expect_stop", [])
    expect = (expect,) if isinstance(expect, str) else tuple(expect)
    bad = [r for r in expect if r not in STOP_REASONS]
    if bad:
        fail(f"expect_stop names an unknown reason {bad[0]!r}", f"use one or more of {', '.join(STOP_REASONS)}")
    if entry.get("task", "transcribe") not in ("transcribe", "translate"):
        fail(f"task {entry['task']!r} is unknown", "use transcribe or translate")
    if entry.get("max_tokens", 1) < 1:
        fail("max_tokens must be at least 1", f"the default is {MAX_TOKENS}")
    if entry.get("min_tokens_per_s", 1.0) <= 0:
        fail("min_tokens_per_s must be above 0", "set a floor such as 20.0, or leave it out for none")
    return Clip(name=entry.get("name") or Path(entry["audio"]).name, audio=audio, language=language,
                reference=reference, metric=metric, max_error=max_error, task=entry.get("task", "transcribe"),
                max_tokens=entry.get("max_tokens", MAX_TOKENS), timestamps=entry.get("timestamps", False),
                suppress_eot=entry.get("suppress_eot", False), expect_stop=expect,
                min_tokens_per_s=entry.get("min_tokens_per_s"), require_npu=entry.get("require_npu", False))


def _type_name(t) -> str:
    if isinstance(t, tuple):
        return "string or a list of strings"
    return {str: "string", float: "number", int: "whole number", bool: "true or false"}[t]
