"""A token that is only part of a multi-byte character (zh byte tokens such as e5 87) shows the character it
forms with its neighbours, then its own bytes, instead of a bare "(e587)"."""
from __future__ import annotations

from dataclasses import replace

from app.runs.session import Session
from app.runs.token_names import formed_text, step_label
from app.views.token_table_model import cell_text
from core.decode.events import EncodedEvent
from tests.app.runs.test_exports import make_run, token


def pieces():
    """甚 is e7 94 9a and 至 is e8 87 b3: here the first is split 2+1 bytes, the second 1+1+1."""
    return [replace(token(0, 0, 10, ""), text_bytes="e794"), replace(token(0, 1, 11, "甚"), text_bytes="9a"),
            replace(token(0, 2, 12, ""), text_bytes="e8"), replace(token(0, 3, 13, ""), text_bytes="87"),
            replace(token(0, 4, 14, "至"), text_bytes="b3"), replace(token(0, 5, 15, ""), text_bytes="e5")]


def test_each_piece_names_the_character_it_belongs_to():
    events = pieces()
    assert [formed_text(events, i) for i in range(6)] == ["甚", "", "至", "至", "", ""]
    assert step_label(events, 0) == "甚 ⟨e794⟩" and step_label(events, 3) == "至 ⟨87⟩"
    assert step_label(events, 1) == "甚"
    assert step_label(events, 5) == "⟨e5⟩"          # never completed: only its bytes


def test_the_token_table_shows_the_characters():
    run = make_run(Session(), [EncodedEvent(0, 900.0, "zh"), *pieces()])
    assert [cell_text(run.rows, i, 2) for i in range(len(run.rows))] == \
        ["甚 ⟨e794⟩", "甚", "至 ⟨e8⟩", "至 ⟨87⟩", "至", "⟨e5⟩"]
