"""`whisperkv transcribe`, `qa` and `doctor` through `local?runner=native`: the native runner built for this PC and
started by the local transport, on a compiled bundle and the STAND-IN Neuron runtime (tests/device/runner/standin/,
no APU exists here) built for a process without Python (OWN_PYTHON: the stand-in starts its own interpreter to
compute; the runner knows none of it). The Python runner's `dla` backend, through the same stand-in build without
that, gives the reference tokens."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from device import ROOT
from tests.device.bundle_helpers import STANDIN_BUILDS, compiled_dla_bundle, standin_library

AUDIO = ROOT / "resources" / "audio"
JFK = "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."


def whisperkv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=900, stdin=subprocess.DEVNULL)


def device(runner: str, build: str = "v1+v2") -> str:
    lib = standin_library(build, own_python=runner == "native")
    return f"local?runner={runner}&backend=dla&neuron_lib={lib}"


def transcribed(runner: str, build: str, clip: str = "test_en.wav") -> dict:
    r = whisperkv("transcribe", str(AUDIO / clip), "--json", "--device", device(runner, build), "--model",
                  str(compiled_dla_bundle()))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("build", STANDIN_BUILDS)
def test_test_en_through_the_native_runner_is_the_python_runners_tokens(build):
    native, python = transcribed("native", build), transcribed("python", build)
    assert (native["runner"], python["runner"]) == ("native", "python")
    assert native["text"] == JFK and native["stop_reason"] == "eot"
    assert native["tokens"] == python["tokens"]
    assert {**native["ran_on"], "library": ""} == {**python["ran_on"], "library": ""}   # each its own build's path


def test_the_stop_line_names_the_native_runner_and_the_library_it_loaded():
    lib = standin_library("v1", own_python=True)
    r = whisperkv("transcribe", str(AUDIO / "en_asterisk_hello-world.wav"), "--device", device("native", "v1"),
                  "--model", str(compiled_dla_bundle()))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Hello world."
    (stop,) = [line for line in r.stderr.splitlines() if line.startswith("[stop:")]
    assert "| native runner |" in stop and f"Neuron runtime V1 0.0.1, native I/O ({lib})" in stop


def test_qa_runs_a_suite_through_the_native_runner(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(f'name = "two clips"\nreferences = "{AUDIO / "transcripts.json"}"\n'
                     f'[[clip]]\naudio = "{AUDIO / "en_asterisk_hello-world.wav"}"\nmax_wer = 0.10\n'
                     f'[[clip]]\naudio = "{AUDIO / "test_zh.wav"}"\nmax_cer = 0.15\n')
    r = whisperkv("qa", str(suite), "--out", str(tmp_path / "report"), "--format", "json", "--device",
                  device("native"), "--model", str(compiled_dla_bundle()))
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((tmp_path / "report" / "qa.json").read_text())
    assert "native" in json.dumps(report)


def test_the_doctor_sees_the_native_runner_as_it_sees_the_python_one():
    rungs = {}
    for runner in ("native", "python"):
        r = whisperkv("doctor", "--quick", "--json", "--device", device(runner), "--model", str(compiled_dla_bundle()))
        assert r.returncode == 0, r.stdout + r.stderr
        rungs[runner] = [(rung["name"], rung["status"]) for rung in json.loads(r.stdout)["rungs"]]
    assert rungs["native"] == rungs["python"]
    assert ("tokens", "pass") in rungs["native"] and ("numbers", "pass") in rungs["native"]
