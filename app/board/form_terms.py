"""Link errors in the device form's own words: the CLI's fixes name URL settings (`pass ?key=PATH`, `drop ?dir=`),
which the studio's form shows as fields, each labelled by the studio's words for its setting
(app/board/setting_words.py: Key file, Runner dir)."""
from __future__ import annotations

import re
from dataclasses import replace

from app.board.setting_words import WORDS
from app.errors import Failure
from device.spec.settings import SETTINGS

# Said differently in the studio, before the general rule: its Deploy button puts a model where the runner looks.
SPECIAL = (("pass ?model=DIR", "deploy the model (Deploy)"),)
# [pass|drop] [an absolute] ?name=value[&name=value…]
SETTING = re.compile(r"(?:(pass|drop) )?(an absolute )?\?([a-z_]+)=([^\s&,;)]*)((?:&[a-z_]+=[^\s&,;)]*)*)")
PLACEHOLDER = re.compile(r"[A-Z_]*")      # PATH, DIR, RUNNER_DIR: no value to copy


def _in_form_words(match: re.Match) -> str:
    labels = {s.name: WORDS[s.name].label for s in SETTINGS if s.studio}
    verb, absolute, name, value, more = match.groups()
    names = [name] + [part.split("=")[0] for part in more.split("&")[1:]]
    if any(n not in labels for n in names):
        return match.group(0)
    if more:                                   # several settings: the fields named
        return " and ".join(labels[n] for n in names)
    field = labels[name]
    if verb == "drop":
        return f"clear {field}"
    if verb == "pass":
        return f"fill in {field}" + (" with an absolute path" if absolute else "")
    return field if PLACEHOLDER.fullmatch(value) else f"{field} = {value}"


def in_form_terms(failure: Failure) -> Failure:
    problem, fix = failure.problem, failure.fix
    for url, form in SPECIAL:
        problem, fix = problem.replace(url, form), fix.replace(url, form)
    return replace(failure, problem=SETTING.sub(_in_form_words, problem), fix=SETTING.sub(_in_form_words, fix))
