"""`whisperkv transcribe` names the runner that served (hello.runner) and the system it runs on (hello.os): its stop
line, its --json, and the decoder's meta every record keeps."""
from __future__ import annotations

import argparse
import json

import pytest

from cli.transcribe import Ran, report
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from device.link.decoder import open_decoder
from device.link.runner_info import RunnerInfo
from device.link.target import parse_target
from tests.conftest import special_tokens
from tests.core.model.test_placement import DLA_DETAIL

EOT_TOKEN = special_tokens().eot
ARGS = {"cache": "on", "word_timestamps": False, "srt": None, "vtt": None}


def events() -> list:
    out = [EncodedEvent(window=0, ms=5.0, language="en")]
    out += [TokenEvent(window=0, step=i, token=tok, text="", logprob=-0.1, eot_prob=p, top=[(tok, -0.1)],
                       cache_len=4 + i, cache_bytes=0, ms=1.0) for i, (tok, p) in
            enumerate([(100, 0.0), (101, 0.1), (EOT_TOKEN, 0.93)])]
    return out + [DoneEvent(window=0, reason="eot", tokens=[100, 101], text=" hi", ms_total=9.0, language="en")]


def ran_with(hello: dict) -> Ran:
    """A decoder that heard this hello (never connected: who decoded is all it tells)."""
    decoder = open_decoder(parse_target("inprocess"))
    decoder.info = RunnerInfo.from_hello({"protocol": 2, "backend": "dla", "backend_detail": DLA_DETAIL, **hello})
    return Ran(decoder)


@pytest.mark.parametrize("hello, named", [({"runner": "native"}, "native"), ({"runner": "python"}, "python"),
                                          ({}, "python")])
def test_the_stop_line_the_json_and_the_meta_name_the_runner(capsys, hello, named):
    ran = ran_with(hello)
    assert ran.decoder.meta()["runner"] == named
    assert report(events(), argparse.Namespace(json=True, **ARGS), 0.0, ran) == 0
    assert json.loads(capsys.readouterr().out)["runner"] == named
    report(events(), argparse.Namespace(json=False, **ARGS), 0.0, ran)
    stop = capsys.readouterr().err.splitlines()[-1]
    assert stop.startswith("[stop: eot") and f"| {named} runner | backend dla | ran on " in stop


def test_the_stop_line_the_json_and_the_meta_name_android_after_the_runner(capsys):
    ran = ran_with({"runner": "native", "os": "Android 14"})
    assert ran.decoder.meta()["os"] == "Android 14"
    assert report(events(), argparse.Namespace(json=True, **ARGS), 0.0, ran) == 0
    assert json.loads(capsys.readouterr().out)["os"] == "Android 14"
    report(events(), argparse.Namespace(json=False, **ARGS), 0.0, ran)
    stop = capsys.readouterr().err.splitlines()[-1]
    assert "| cache on | native runner | Android 14 | backend dla | ran on " in stop
