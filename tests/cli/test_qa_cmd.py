"""`whisperkv qa`: exit 0 when every clip passes, 1 when one fails, 2 on a setup error; reports written."""
import argparse
import json
import subprocess
import sys

import pytest

from cli.main import main
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from tests.conftest import AUDIO, ROOT, special_tokens

HELLO = AUDIO / "en_asterisk_hello-world.wav"
EOT_TOKEN = special_tokens().eot


def suite(tmp_path, reference="Hello world.", extra="", audio=HELLO):
    path = tmp_path / "suite.toml"
    path.write_text(f'name = "t"\n[[clip]]\naudio = "{audio}"\nlanguage = "en"\nreference = "{reference}"\n'
                    f"max_wer = 0.10\n{extra}", encoding="utf-8")
    return path


@pytest.fixture
def in_process(monkeypatch, model, encoder_cache):
    """`qa --device inprocess` decodes here: give it the session's model and encoder cache."""
    from device.runner import load

    class Shared(load.LoadedModel):
        def transcribe(self, mels, options, **kw):
            return model.transcribe(mels, options, encoder_cache=encoder_cache, **kw)

    shared = Shared(model.backend, model.tokenizer, model.sha256, model.source)
    monkeypatch.setattr(load, "load_model_source", lambda *a, **k: shared)


def test_passing_suite_as_a_user_runs_it(tmp_path):
    r = subprocess.run([sys.executable, "-m", "cli", "qa", str(suite(tmp_path)), "--out", str(tmp_path / "report")],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout and "EOT at step" in r.stdout and "1/1 passed" in r.stdout
    doc = json.loads((tmp_path / "report" / "qa.json").read_text())
    (clip,) = doc["clips"]
    assert doc["passed"] and clip["stop_reason"] == "eot" and clip["verdict"].startswith("EOT at step")
    assert clip["tokens"] > 0 and clip["encoder_ms"] > 0 and clip["rtf"] > 0 and clip["per_token_ms_p50"] > 0
    assert (tmp_path / "report" / "qa.csv").read_text().count("\n") == 2
    html = (tmp_path / "report" / "qa.html").read_text()
    assert "<svg" in html and "PASS" in html and "src=" not in html


def test_wrong_reference_fails_with_exit_1(tmp_path, capsys, in_process):
    code = main(["qa", str(suite(tmp_path, reference="Goodbye cruel moon.")), "--device", "inprocess",
                 "--out", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL" in out and "WER 1.000 > 0.10" in out and "0/1 passed" in out
    assert json.loads((tmp_path / "r" / "qa.json").read_text())["clips"][0]["passed"] is False


def test_in_process_qa_takes_an_exported_bundle(tmp_path, capsys):
    """`whisperkv qa SUITE --device inprocess --model BUNDLE_DIR`, as with `transcribe`: the one loader."""
    from tests.device.bundle_helpers import exported_bundle

    bundle = exported_bundle()
    code = main(["qa", str(suite(tmp_path)), "--device", "inprocess", "--model", str(bundle),
                 "--out", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1/1 passed" in out and "EOT at step" in out
    doc = json.loads((tmp_path / "r" / "qa.json").read_text())
    assert doc["meta"]["device"] == "in-process" and doc["meta"]["backend"] == "onnx"
    assert doc["meta"]["model_sha256"] == json.loads((bundle / "model.json").read_text())["model_sha256"]


def setup_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("whisperkv: error:") and "Traceback" not in err
    return err


def test_setup_errors_exit_2(tmp_path, capsys, in_process):
    out = ["--out", str(tmp_path / "r"), "--device", "inprocess"]
    assert "suite file not found" in setup_error(capsys, ["qa", str(tmp_path / "none.toml"), *out])
    (tmp_path / "bad.toml").write_text("[[clip]\n")
    assert "not valid TOML" in setup_error(capsys, ["qa", str(tmp_path / "bad.toml"), *out])
    missing = suite(tmp_path, audio=tmp_path / "gone.wav")
    assert "audio not found" in setup_error(capsys, ["qa", str(missing), *out])
    bad_lang = suite(tmp_path).read_text().replace('language = "en"', 'language = "xx"')
    (tmp_path / "lang.toml").write_text(bad_lang)
    assert "unknown language 'xx'" in setup_error(capsys, ["qa", str(tmp_path / "lang.toml"), *out])
    assert not (tmp_path / "r").exists()


def test_unreachable_device_exits_2(tmp_path, capsys):
    err = setup_error(capsys, ["qa", str(suite(tmp_path)), "--device", "ssh://nobody@127.0.0.1:1",
                               "--out", str(tmp_path / "r")])
    assert "127.0.0.1" in err
    (tmp_path / "lang.toml").write_text(suite(tmp_path).read_text().replace('language = "en"', 'language = "cn"'))
    err = setup_error(capsys, ["qa", str(tmp_path / "lang.toml"), "--out", str(tmp_path / "r")])   # the local runner
    assert "unknown language 'cn'" in err and "zh" in err      # caught before any runner starts


def test_transcribe_reports_the_verdict(capsys):
    """The transcribe subcommand's JSON and summary line carry the same verdict as the QA report."""
    from cli.transcribe import report

    events = [EncodedEvent(window=0, ms=5.0, language="en")]
    events += [TokenEvent(window=0, step=i, token=tok, text="", logprob=-0.1, eot_prob=p, top=[(tok, -0.1)],
                          cache_len=4 + i, cache_bytes=0, ms=1.0) for i, (tok, p) in
               enumerate([(100, 0.0), (101, 0.1), (EOT_TOKEN, 0.93)])]
    events.append(DoneEvent(window=0, reason="eot", tokens=[100, 101], text=" hi", ms_total=9.0, language="en"))
    assert report(events, argparse.Namespace(json=True, cache="on"), 0.0) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "EOT at step 2 (p=0.93)"
    report(events, argparse.Namespace(json=False, cache="on"), 0.0)
    assert "stop: eot — EOT at step 2 (p=0.93)" in capsys.readouterr().err
