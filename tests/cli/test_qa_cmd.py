"""`whisperkv qa`: exit 0 when every clip passes, 1 when one fails, 2 on a setup error; reports written."""
import argparse
import json
import subprocess
import sys

import pytest

from cli.main import main
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from tests.conftest import AUDIO, ROOT, special_tokens
from tests.device.link_helpers import ssh_url, sshd  # noqa: F401  (sshd: the real OpenSSH server fixture)

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
        def transcribe(self, mel, options, **kw):
            return model.transcribe(mel, options, **{**kw, "encoder_cache": encoder_cache})

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


def test_a_suite_that_requires_the_npu_fails_a_cpu_run_naming_why(tmp_path, capsys, in_process):
    """A plain CPU backend against a suite's NPU requirement and a speed floor no CPU reaches."""
    path = suite(tmp_path, extra="require_npu = true\nmin_tokens_per_s = 100000\n")
    assert main(["qa", str(path), "--device", "inprocess", "--out", str(tmp_path / "r")]) == 1
    out = capsys.readouterr().out
    assert "ran on the CPU where the NPU was required" in out and "0/1 passed" in out
    speed = next(line for line in out.splitlines() if "tokens/s < floor 100000" in line)
    (clip,) = json.loads((tmp_path / "r" / "qa.json").read_text())["clips"]
    assert clip["ran_on"] == "CPU" and f"{clip['tokens_per_s']:.1f} tokens/s" in speed
    assert "<th>ran on</th>" in (tmp_path / "r" / "qa.html").read_text()
    # the same clip with neither passes, and its row still says where it ran
    assert main(["qa", str(suite(tmp_path)), "--device", "inprocess", "--out", str(tmp_path / "r2")]) == 0
    assert json.loads((tmp_path / "r2" / "qa.json").read_text())["clips"][0]["ran_on"] == "CPU"


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


def test_a_suite_clip_recorded_as_m4a_passes(tmp_path, capsys, in_process):
    """QA reads what the CLI reads: the hello-world clip as AAC in .m4a (written from the WAV here)."""
    from tests.audio_files import write_as

    m4a = write_as(HELLO, tmp_path / "hello.m4a")
    code = main(["qa", str(suite(tmp_path, audio=m4a)), "--device", "inprocess", "--out", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "hello.m4a" in out and "1/1 passed" in out


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
    from cli.transcribe import Ran, report
    from device.link.decoder import open_decoder
    from device.link.target import parse_target

    ran = Ran(open_decoder(parse_target("inprocess")))       # never connected: who decoded is all it tells
    args = {"cache": "on", "word_timestamps": False, "srt": None, "vtt": None}

    events = [EncodedEvent(window=0, ms=5.0, language="en")]
    events += [TokenEvent(window=0, step=i, token=tok, text="", logprob=-0.1, eot_prob=p, top=[(tok, -0.1)],
                          cache_len=4 + i, cache_bytes=0, ms=1.0) for i, (tok, p) in
               enumerate([(100, 0.0), (101, 0.1), (EOT_TOKEN, 0.93)])]
    events.append(DoneEvent(window=0, reason="eot", tokens=[100, 101], text=" hi", ms_total=9.0, language="en"))
    assert report(events, argparse.Namespace(json=True, **args), 0.0, ran) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "EOT at step 2 (p=0.93)"
    report(events, argparse.Namespace(json=False, **args), 0.0, ran)
    assert "stop: eot — EOT at step 2 (p=0.93)" in capsys.readouterr().err


def report(out) -> dict:
    return json.loads((out / "qa.json").read_text())


def test_two_devices_write_one_report_and_a_rerun_against_it_exits_0(tmp_path, capsys, in_process):
    """The issue's `--device local --device inprocess`, then `--baseline r/qa.json` on the same build."""
    path = suite(tmp_path)
    assert main(["qa", str(path), "--device", "local", "--device", "inprocess", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "local: 1/1 passed" in out and "inprocess: 1/1 passed" in out and "inprocess vs local: tokens" in out
    doc = report(tmp_path / "r")
    assert [d["device"] for d in doc["devices"]] == ["local", "inprocess"] and doc["passed"]
    assert [(c["device"], c["passed"]) for c in doc["clips"]] == [("local", True), ("inprocess", True)]
    (cross,) = doc["cross"]
    assert cross["tokens_identical"] is (doc["clips"][0]["token_ids"] == doc["clips"][1]["token_ids"])
    assert cross["error_delta"] == 0.0 and cross["latency_ratio"] > 0
    html = (tmp_path / "r" / "qa.html").read_text()
    assert 'class="group">local<' in html and 'class="group">inprocess vs local<' in html
    assert (tmp_path / "r" / "qa.csv").read_text().splitlines()[0].count("error_rate") == 2

    code = main(["qa", str(path), "--device", "local", "--device", "inprocess", "--out", str(tmp_path / "r2"),
                 "--baseline", str(tmp_path / "r" / "qa.json")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "0 regressed" in out
    assert all(c["baseline"] is not None and "regressed" not in c["baseline"]["marks"]
               for c in report(tmp_path / "r2")["clips"])


def test_a_regression_against_the_baseline_exits_1(tmp_path, capsys, in_process):
    path = suite(tmp_path, reference="Hello there world.", extra="")   # WER 1/3 today, under its limit
    path.write_text(path.read_text().replace("max_wer = 0.10", "max_wer = 0.5"))
    # a slower mark needs a slower run: timing on a busy machine is not what this test is about
    argv = ["qa", str(path), "--device", "inprocess", "--out", str(tmp_path / "r"), "--slower-ms", "1e9"]
    assert main(argv) == 0
    old = report(tmp_path / "r")
    old["clips"][0] |= {"error_rate": 0.0, "stop_reason": "max_tokens"}       # it used to be right
    (tmp_path / "old.json").write_text(json.dumps(old))
    capsys.readouterr()
    assert main(argv + ["--baseline", str(tmp_path / "old.json")]) == 1
    out = capsys.readouterr().out
    assert "1 regressed, 0 slower, 1 changed" in out and "regressed: WER 0.000 → 0.333" in out
    assert "changed: stop max_tokens → eot" in out and "FAIL" in out
    (clip,) = report(tmp_path / "r")["clips"]
    assert clip["passed"] and clip["baseline"]["marks"] == ["regressed", "changed"]
    assert main(argv + ["--baseline", str(tmp_path / "old.json"), "--fail-on", "none"]) == 0
    assert main(argv + ["--baseline", str(tmp_path / "old.json"), "--fail-on", "changed"]) == 1


def test_bad_baseline_and_devices_exit_2_before_decoding(tmp_path, capsys):
    out = ["--out", str(tmp_path / "r"), "--device", "inprocess"]
    err = setup_error(capsys, ["qa", str(suite(tmp_path)), *out, "--baseline", str(tmp_path / "old" / "qa.json")])
    assert "baseline not found" in err and "--baseline DIR/qa.json" in err
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    err = setup_error(capsys, ["qa", str(suite(tmp_path)), *out, "--baseline", str(tmp_path / "notes.json")])
    assert "is not a qa.json report" in err
    err = setup_error(capsys, ["qa", str(suite(tmp_path)), *out, "--device", "inprocess"])
    assert "--device inprocess is given twice" in err
    assert not (tmp_path / "r").exists()
    with pytest.raises(SystemExit) as exit_:
        main(["qa", str(suite(tmp_path)), *out, "--fail-on", "faster"])
    assert exit_.value.code == 2 and "unknown mark 'faster'" in capsys.readouterr().err


def test_an_unreachable_device_among_several_fails_the_run_and_keeps_the_others(tmp_path, capsys, in_process):
    code = main(["qa", str(suite(tmp_path)), "--device", "ssh://nobody@127.0.0.1:1", "--device", "inprocess",
                 "--out", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 1 and "device FAILED" in out and "inprocess: 1/1 passed" in out
    doc = report(tmp_path / "r")
    assert "127.0.0.1" in doc["devices"][0]["error"] and not doc["devices"][1]["error"]
    assert [c["device"] for c in doc["clips"]] == ["inprocess"] and not doc["passed"]


def test_two_devices_over_a_real_sshd(tmp_path, capsys, monkeypatch, in_process, sshd):  # noqa: F811
    """One board over SSH on loopback (the runner in this checkout) and the in-process model, in parallel."""
    monkeypatch.setenv("HOME", str(tmp_path))           # no known_hosts: the key is trusted by its fingerprint
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    fp = subprocess.run(["ssh-keygen", "-lf", str(sshd.workdir / "host_key.pub")], capture_output=True, text=True,
                        check=True).stdout.split()[1]
    url = ssh_url(sshd)
    code = main(["qa", str(suite(tmp_path)), "--device", url, "--device", "inprocess", "--trust-host-key", fp,
                 "--out", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0, out
    doc = report(tmp_path / "r")
    assert [d["device"] for d in doc["devices"]] == [url, "inprocess"]
    assert doc["devices"][0]["meta"]["device"] == f"ssh://{sshd.user}@127.0.0.1:{sshd.port}"
    assert [c["passed"] for c in doc["clips"]] == [True, True] and doc["cross"][0]["error_delta"] == 0.0


def test_qa_decodes_each_clip_in_the_window_asked_and_the_report_says_so(tmp_path, capsys, in_process):
    assert main(["qa", str(suite(tmp_path)), "--device", "inprocess", "--window", "20", "--out",
                 str(tmp_path / "r")]) == 0
    assert "cache on, window 20 s" in capsys.readouterr().out
    doc = json.loads((tmp_path / "r" / "qa.json").read_text())
    assert doc["clips"][0]["window_s"] == 20 and doc["meta"]["window"] == "20"
    assert main(["qa", str(suite(tmp_path)), "--device", "inprocess", "--window", "auto", "--window-floor", "0",
                 "--out", str(tmp_path / "a")]) == 0
    doc = json.loads((tmp_path / "a" / "qa.json").read_text())
    assert doc["clips"][0]["window_s"] == 10 and doc["meta"]["window_floor_s"] == 0.0
