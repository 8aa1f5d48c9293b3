"""`whisperkv doctor` on the local runner with the STAND-IN Neuron runtime (tests/device/runner/standin/) and a
bundle compiled by the STAND-IN ncc-tflite: the whole ladder, and one failure per rung, each stopping there with
its fix and keeping what the rungs before it measured. `--quick` wherever the tokens are not the point."""
from __future__ import annotations

import json

import pytest

from cli.main import main
from device.deploy.deploy import deploy
from device.doctor.ladder import NAMES
from device.doctor.numbers import BOUNDS
from device.link.local import LocalTransport
from tests.cli.doctor_helpers import bundle_for, claim_soc, compiled_bundle, standin_library
from tests.device.link_helpers import (  # noqa: F401  (sshd: a real OpenSSH server)
    STAND_IN_ADB,
    install_stand_in,
    sshd,
    stand_in_android,
)


def doctor(capsys, device: str, *extra: str, model=None) -> tuple[int, dict]:
    """The doctor's exit status and report; `model` False: no --model (the board's own record and model.json)."""
    bundle = [] if model is False else ["--model", str(model or compiled_bundle())]
    code = main(["doctor", "--device", device, *bundle, "--quick", "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def rungs(doc: dict) -> dict:
    assert [r["name"] for r in doc["rungs"]] == list(NAMES)
    return {r["name"]: r for r in doc["rungs"]}


def stopped_at(doc: dict, name: str) -> dict:
    """The failed rung; every rung before it ran, every one after it did not."""
    by = rungs(doc)
    at = NAMES.index(name)
    assert [by[n]["status"] for n in NAMES[at:]] == ["fail"] + ["not-run"] * (len(NAMES) - at - 1)
    assert all(by[n]["status"] in ("pass", "warn") and by[n]["figures"] for n in NAMES[:at])
    assert by[name]["fix"]
    return by


def dla(lib, **settings) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"backend": "dla", "neuron_lib": lib, **settings}.items())
    return f"local?{query}"


def test_the_whole_ladder_passes_with_warnings_and_writes_its_report(capsys, tmp_path):
    code, doc = doctor(capsys, dla(standin_library()), "--out", str(tmp_path), "--npu-profile")
    by = rungs(doc)
    assert code == 0, doc
    assert set(doc) == {"device", "bundle", "rungs"} and doc["bundle"] == str(compiled_bundle())
    for r in doc["rungs"]:
        assert set(r) == {"name", "status", "figures", "fix"} and r["status"] in ("pass", "warn"), r
    # a PC with a STAND-IN runtime: what only a board shows warns, and says why
    assert by["runtime"]["figures"]["api"] in ("V1", "V2") and by["loads"]["figures"]["npu"] == "stand-in"
    assert any("this PC" in w for w in by["speed"]["figures"]["warnings"])
    numbers = {o["name"]: o for o in by["numbers"]["figures"]["outputs"]}
    assert set(numbers) == {"cross_k", "cross_v", "logits"} and numbers["logits"]["top1_agrees"]
    assert by["tokens"]["figures"]["clips"][0]["first_difference"] is None
    # the runtime's profiler (the STAND-IN writes MediaTek's columns) says what ran on each graph; hello says the
    # profiled runner re-creates its runtimes, and the speed rung times runners of its own without the profiler
    assert [g["graph"] for g in by["placement"]["figures"]["npu_profile"]] == ["encoder", "decoder_step"]
    assert "re-created" in by["loads"]["figures"]["npu_profile"] and "profiler off" in by["speed"]["figures"]["timed"]
    assert json.loads((tmp_path / "doctor.json").read_text()) == doc
    # what only a board can settle, recorded: the path, and each slot's sizes and the form derived from them
    loads = json.loads((tmp_path / "doctor.json").read_text())["rungs"][NAMES.index("loads")]["figures"]
    assert (loads["io"], loads["create"], loads["cache_dtype"]) == ("native", "plain", "float16")
    for graph in loads["graphs"]:
        assert "--suppress-input" in graph["flags"] and graph["slots"]
        for slot in graph["slots"]:
            assert {"size", "padded_size", "element_bytes", "pitch", "row"} <= set(slot), slot
    page = (tmp_path / "doctor.html").read_text()
    assert "the board" in page and "NumPy reference" in page and "hello" in page.lower()
    # the ladder's runner's stderr beside the report; logcat only on Android
    assert (tmp_path / "runner-stderr.txt").is_file() and not (tmp_path / "logcat-neuron.txt").exists()


def test_the_quick_ladder_with_no_device_passes_on_this_pc(capsys):
    """The default device, this PC's runner on `auto` (native-int8b where the CPU runs it), held to the bounds of
    its own arithmetic: every rung passes or warns."""
    code = main(["doctor", "--quick", "--json"])
    by = rungs(json.loads(capsys.readouterr().out))
    assert code == 0 and all(r["status"] in ("pass", "warn") for r in by.values()), by
    assert by["numbers"]["status"] == "pass" and by["tokens"]["status"] == "pass"


def test_an_unreachable_port_stops_at_reach(capsys):
    code, doc = doctor(capsys, "ssh://nobody@127.0.0.1:1")
    by = stopped_at(doc, "reach")
    assert code == 1 and "port 1" in by["reach"]["figures"]["decided_by"]


def test_an_unknown_host_key_stops_at_reach_with_the_way_to_trust_it(capsys, sshd,  # noqa: F811
                                                                     tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))          # no known_hosts
    code, doc = doctor(capsys, f"ssh://{sshd.user}@127.0.0.1:{sshd.port}?key={sshd.user_key}")
    by = stopped_at(doc, "reach")
    assert code == 1 and "unknown" in by["reach"]["figures"]["decided_by"]
    assert "--trust-host-key SHA256:" in by["reach"]["fix"]


# STAND-IN for Android's `logcat`, written by the tests: a dump with Neuron lines among others.
LOGCAT = """#!/bin/sh
# STAND-IN for Android's logcat (test only)
[ "$1" = -d ] || exit 2
echo "11-29 05:00:00.000  100  100 I ActivityManager: Start proc"
echo "11-29 05:00:01.000  200  200 E NeuronRuntime: dlopen failed: library not accessible for the namespace"
echo "11-29 05:00:02.000  300  300 W APUSYS  : power on"
echo "11-29 05:00:03.000  300  300 D mdla    : cmd done"
"""


def test_an_android_device_without_the_native_runner_stops_at_identity_and_keeps_logcat_s_neuron_lines(
        capsys, tmp_path, monkeypatch):
    """A STAND-IN adb whose device answers getprop and logcat as Android does; nothing deployed there."""
    install_stand_in(tmp_path, monkeypatch, "adb", STAND_IN_ADB, "ADB_STANDIN_LOG")
    bindir = stand_in_android(tmp_path, monkeypatch)
    (bindir / "logcat").write_text(LOGCAT)
    (bindir / "logcat").chmod(0o755)
    out = tmp_path / "report"
    code, doc = doctor(capsys, f"adb://STANDIN01?python=/nonexistent/python3&dir={tmp_path / 'w'}", "--out",
                       str(out), model=False)
    by = stopped_at(doc, "identity")
    assert code == 1 and by["identity"]["figures"]["os"] == "Android 14 on MT8189"
    assert by["identity"]["figures"]["board_runner"] == "native" and "deploy the native runner" in by["identity"]["fix"]
    assert by["reach"]["figures"]["link"].startswith("adb")
    lines = (out / "logcat-neuron.txt").read_text().splitlines()
    assert [line.split()[5] for line in lines] == ["NeuronRuntime:", "APUSYS", "mdla"]
    assert not (out / "runner-stderr.txt").exists()          # no runner ran


def test_a_bundle_for_an_mdla_3_soc_stops_at_identity_on_an_mt8371(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WHISPERKV_SOC_ROOT", str(claim_soc(tmp_path / "board", "MT8371")))
    bundle = bundle_for("mt8390", tmp_path / "mt8390")
    code, doc = doctor(capsys, dla(standin_library()), model=bundle)
    by = stopped_at(doc, "identity")
    assert code == 1 and by["identity"]["figures"]["soc"] == "MT8371"
    assert by["identity"]["figures"]["bundle_npu"] == "MDLA 3.0" and "--soc mt8371" in by["identity"]["fix"]


@pytest.mark.parametrize("lib, said", [("/nonexistent/libneuron_runtime.so", "no Neuron runtime library"),
                                       ("EMPTY", "neither")])
def test_no_runtime_library_or_one_with_neither_api_stops_at_runtime(capsys, lib, said):
    code, doc = doctor(capsys, dla(standin_library("EMPTY") if lib == "EMPTY" else lib))
    by = stopped_at(doc, "runtime")
    assert code == 1 and said in by["runtime"]["figures"]["decided_by"] and "neuron_lib" in by["runtime"]["fix"]
    assert by["identity"]["figures"]["os"]


def test_a_model_file_changed_after_deploy_stops_at_deployed_without_the_bundle(capsys, tmp_path):
    """No --model: the board is checked against deploy's record, its model.json read for the bundle's SoC."""
    board = tmp_path / "board"
    deploy(LocalTransport(dir=str(board)), backend="dla", model=compiled_bundle())
    with open(board / "model" / "encoder.dla", "ab") as f:
        f.write(b"\0")
    code, doc = doctor(capsys, dla(standin_library(), dir=board), model=False)
    by = stopped_at(doc, "deployed")
    assert code == 1 and by["deployed"]["figures"]["changed"] == ["model/encoder.dla"]
    assert by["identity"]["figures"]["bundle_soc"] == "mt8371" and by["runtime"]["figures"]["dla_compiler"]
    assert "whisperkv deploy --device 'local://?" in by["deployed"]["fix"]
    assert f"--model {compiled_bundle()} --backend dla" in by["deployed"]["fix"]


def test_a_create_that_fails_stops_at_loads(capsys):
    code, doc = doctor(capsys, dla(standin_library("FAIL_CREATE")))
    by = stopped_at(doc, "loads")
    assert code == 1 and "create" in by["loads"]["figures"]["decided_by"] and "compile" in by["loads"]["fix"]


@pytest.mark.parametrize("fault, value", [("STANDIN_NOISE", "0.05"), ("STANDIN_SWAP", "cross_k,cross_v")])
def test_noise_or_swapped_outputs_stop_at_numbers(capsys, monkeypatch, fault, value):
    monkeypatch.setenv(fault, value)
    code, doc = doctor(capsys, dla(standin_library()))
    by = stopped_at(doc, "numbers")
    bad = [o["name"] for o in by["numbers"]["figures"]["outputs"] if not o["ok"]]
    assert code == 1 and "cross_k" in bad and by["loads"]["figures"]["npu"] == "stand-in"


def test_relative_noise_of_1e_3_passes_numbers_and_tokens_pass_or_warn(capsys, monkeypatch):
    """What fp16 rounding could do to every output: the floors of the fp16 arithmetic hold it."""
    monkeypatch.setenv("STANDIN_REL_NOISE", "0.001")
    code, doc = doctor(capsys, dla(standin_library()))
    by = rungs(doc)
    assert code == 0 and by["numbers"]["status"] == "pass" and by["tokens"]["status"] in ("pass", "warn")
    assert by["numbers"]["figures"]["cosine_floor"] == BOUNDS["fp16"].cosine


def test_a_fault_within_the_numbers_floor_that_changes_the_text_fails_at_tokens(capsys, monkeypatch):
    """End-of-text raised from the 4th step run after each window on, the one after the SOT sequence whose logits
    pick the first token: the first step, which the numbers rung reads, is clean."""
    monkeypatch.setenv("STANDIN_EOT_FROM", "4")
    code, doc = doctor(capsys, dla(standin_library()))
    by = stopped_at(doc, "tokens")
    (clip,) = by["tokens"]["figures"]["clips"]
    assert code == 1 and by["numbers"]["status"] == "pass" and clip["first_difference"] is not None
    assert clip["wer"] > BOUNDS["fp16"].wer and "beyond what its arithmetic explains" in by["tokens"]["fix"]


def test_what_the_doctor_cannot_check_is_exit_2(capsys, tmp_path):
    assert main(["doctor", "--device", "inprocess"]) == 2
    assert "runner" in capsys.readouterr().err
    assert main(["doctor", "--model", str(tmp_path)]) == 2
    assert "no model.json" in capsys.readouterr().err


def test_the_doctor_checks_the_runner_that_the_runner_setting_names():
    from cli.doctor_cmd import checkup_for
    from cli.main import build_parser

    asked = {("--runner", "native"): "native", ("--device", "local?runner=native"): "native", (): None}
    for argv, runner in asked.items():
        args = build_parser().parse_args(["doctor", *argv])
        assert checkup_for(args).target.runner == runner
