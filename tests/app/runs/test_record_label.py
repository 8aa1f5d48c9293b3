"""The run picker's line: an `auto` run names the language it detected beside it."""
from __future__ import annotations

from app.runs.session import Session
from core.decode.events import EncodedEvent
from tests.app.runs.test_exports import make_run, token


def test_an_auto_run_shows_the_detected_language_beside_it():
    session = Session()
    auto = make_run(session, [EncodedEvent(0, 900.0, "zh"), token(0, 0, 1, "甚")])
    assert auto.options.language is None
    assert " · auto → zh · transcribe" in auto.label()
    asked = make_run(session, [EncodedEvent(0, 900.0, "zh")])
    asked.options.language = "zh"
    assert "→" not in asked.label() and " · zh · transcribe" in asked.label()
    waiting = make_run(session, [])
    assert " · auto · transcribe" in waiting.label()
