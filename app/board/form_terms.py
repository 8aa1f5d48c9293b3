"""Link errors in the device form's own words: the CLI's fixes name URL settings (`?key=PATH`, `?dir=`),
which the studio's form shows as fields (Key file, Runner dir)."""
from __future__ import annotations

from dataclasses import replace

from app.errors import Failure

# URL phrase → the form's words, longest first so "pass ?key=PATH" wins over "?key=".
PHRASES = (
    ("pass ?key=PATH", "fill in Key file"),
    ("pass ?key= with an unencrypted key", "fill in Key file with an unencrypted key"),
    ("pass an absolute ?dir=", "fill in Runner dir with an absolute path"),
    ("or drop ?dir=", "or clear Runner dir"),
    ("pass ?model=DIR", "deploy the model (Deploy)"),
    ("?dir=RUNNER_DIR&python=/path/to/python3", "Runner dir and Python"),
    ("?python=/usr/bin/python3", "Python = /usr/bin/python3"),
)


def in_form_terms(failure: Failure) -> Failure:
    problem, fix = failure.problem, failure.fix
    for url, form in PHRASES:
        problem, fix = problem.replace(url, form), fix.replace(url, form)
    return replace(failure, problem=problem, fix=fix)
