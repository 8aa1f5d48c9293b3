"""A fix that names device settings keeps them as fields (core/errors.py): the CLI reads the same line as before,
and another reader words each setting its own way from the field, not from the text."""
from __future__ import annotations

import pickle

import pytest

from core.errors import Fix, Setting, WhisperKVError


def test_a_fix_reads_as_the_cli_line_and_keeps_its_settings():
    key = Setting("key", "PATH", "pass")
    fix = Fix("check the user name, ", key, ", or use a password")
    assert fix == "check the user name, pass ?key=PATH, or use a password" and isinstance(fix, str)
    assert fix.settings == (key,)
    assert fix.worded(lambda s: f"fill in {s.name}") == "check the user name, fill in key, or use a password"
    err = WhisperKVError("refused", fix)
    assert str(err) == "refused — check the user name, pass ?key=PATH, or use a password" and err.fix.settings


def test_every_form_of_a_setting_reads_as_the_url_writes_it():
    assert str(Setting("dir", verb="drop")) == "drop ?dir="
    assert str(Setting("dir", verb="pass", absolute=True)) == "pass an absolute ?dir="
    assert str(Setting("python", "/usr/bin/python3")) == "?python=/usr/bin/python3"
    assert Setting("key", "PATH").placeholder and Setting("dir").placeholder
    assert not Setting("python", "/usr/bin/python3").placeholder and not Setting("backend", "dla").placeholder
    both = Setting("dir", "RUNNER_DIR", more=(("python", "/path/to/python3"),))
    assert str(both) == "?dir=RUNNER_DIR&python=/path/to/python3" and both.names == ("dir", "python")


def test_fixes_compose_and_survive_a_pickle():
    key, drop = Setting("key", "PATH", "pass"), Setting("dir", verb="drop")
    fix = Fix(Fix.join(", ", ["check the user name", key]), ", or ", drop)
    assert fix == "check the user name, pass ?key=PATH, or drop ?dir=" and fix.settings == (key, drop)
    again = pickle.loads(pickle.dumps(fix))
    assert again == fix and again.settings == (key, drop)
    assert Fix("plain").settings == () and Fix("plain").worded(str) == "plain"


def test_a_fix_crosses_the_wire_as_its_parts():
    """The runner's `error` event carries a fix's parts (docs/protocol.md) and the host rebuilds the same Fix; parts
    that are no fix (another runner's) are refused in one ValueError, which the host reads as no fix."""
    import json

    from core.errors import wire_fix

    both = Setting("dir", "RUNNER_DIR", more=(("python", "/p"),))
    fix = Fix("deploy, or ", both, ", or ", Setting("dir", verb="drop", absolute=True))
    parts = json.loads(json.dumps(fix.to_wire()))
    assert parts[1] == {"setting": "dir", "value": "RUNNER_DIR", "more": [["python", "/p"]]}
    again = Fix.from_wire(parts)
    assert again == fix and again.parts == fix.parts
    assert wire_fix(WhisperKVError("x", fix)) == parts and wire_fix(WhisperKVError("x", "plain")) is None
    for bad in (None, "text", [1], [{"value": "PATH"}], [{"setting": "key", "value": 3}],
                [{"setting": "k", "more": [1]}]):
        with pytest.raises(ValueError):
            Fix.from_wire(bad)
