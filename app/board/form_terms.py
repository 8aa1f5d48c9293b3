"""Link errors in the device form's own words: a fix that names URL settings (a core.errors.Fix, whose Setting parts
read `pass ?key=PATH`, `drop ?dir=` on the command line) names the studio form's fields instead, each labelled by
the studio's words for its setting (app/board/setting_words.py: Key file, Runner dir). Worded from the error's
fields, never from its text: a fix given as plain text reads as the CLI's."""
from __future__ import annotations

from dataclasses import replace

from app.board.setting_words import WORDS
from app.errors import Failure
from core.errors import Fix, Setting
from device.spec.settings import SETTINGS

# Said differently in the studio, before the general rule: its Deploy button puts a model where the runner looks.
SPECIAL = {Setting("model", "DIR", "pass"): "deploy the model (Deploy)"}


def in_form_words(setting: Setting) -> str:
    labels = {s.name: WORDS[s.name].label for s in SETTINGS if s.studio}
    if setting in SPECIAL:
        return SPECIAL[setting]
    if any(name not in labels for name in setting.names):
        return str(setting)
    if setting.more:                             # several settings: the fields named
        return " and ".join(labels[name] for name in setting.names)
    field = labels[setting.name]
    if setting.verb == "drop":
        return f"clear {field}"
    if setting.verb == "pass":
        return f"fill in {field}" + (" with an absolute path" if setting.absolute else "")
    return field if setting.placeholder else f"{field} = {setting.value}"


def in_form_terms(failure: Failure) -> Failure:
    if not isinstance(failure.fix, Fix):
        return failure
    return replace(failure, fix=failure.fix.worded(in_form_words))
