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


def test_the_picker_counts_tokens_as_the_qa_table_does():
    """Text tokens only: EOT (and timestamps) are steps, not tokens of the transcript (QA said 25, the picker 26)."""
    from app.runs.session import Session
    from core.decode.events import DoneEvent
    from core.qa.run import score
    from core.qa.suite import Clip
    from tests.app.runs.test_exports import EOT

    run = make_run(Session(), [EncodedEvent(0, 900.0, "en"), token(0, 0, 1, " Hello"), token(0, 1, 2, " world"),
                               token(0, 2, EOT, "", special=True),
                               DoneEvent(0, "eot", [1, 2], " Hello world", 900.0, "en")])
    assert len(run.rows) == 3 and "· 2 tok ·" in run.label()
    clip = Clip(name="c", audio="c.wav", language="en", reference="Hello world", metric="wer", max_error=0.5)
    assert score(clip, run.transcript, 1000.0, 2.0).tokens == 2 == run.token_count()


def test_a_run_names_the_dtype_and_cross_form_its_runner_served():
    run = make_run(Session(), [EncodedEvent(0, 900.0, "en")])
    assert not run.label().endswith("kv")
    run.device_info = {"backend": "dla", "dtype": "mixed", "cross": "kv"}
    assert run.label().endswith(" · mixed kv")
