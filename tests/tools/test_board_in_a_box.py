"""The board path on an emulated arm64 board: tools/board-in-a-box up, device-info, deploy, test_en.wav's JFK
sentence with the PC's NumPy reference's tokens (docs/board.md's done-when, through the CLI), a QA suite on
hello-world sampled while the box's thermal zone passes its throttle mark, then down.

The box is a STAND-IN for an MT8371 board, named as one here: qemu emulates a Neoverse N1 (so nothing here
is timed), there is no NPU, and its SoC and thermal zones are files tools/board_box/identity.py writes.
It needs root and binfmt_misc; it is skipped only when the binfmt_misc mount itself fails (or, off CI, when
not root), saying so. The first run builds the root filesystem (tens of minutes); later runs unpack the
cached tarball (docs/benchmarks.md).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from device.runner.backends import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
BOX = ROOT / "tools" / "board-in-a-box"
HELLO = ROOT / "resources" / "audio" / "en_asterisk_hello-world.wav"
TEST_EN = ROOT / "resources" / "audio" / "test_en.wav"
JFK = "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
# All device-info may call absent on the box, because the box lacks it: a runner and model before deploy,
# ONNX Runtime (the `runner` extra has none), the NPU's /dev/apusys*.
ABSENT_ON_THE_BOX = {"onnxruntime", "runner_version", "model", "model_sha256", "npu"}


def box(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BOX), *args], capture_output=True, text=True, timeout=timeout)


def whisperkv(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def board():
    if os.geteuid() != 0:
        pytest.skip("the board in a box needs root (chroot and mounts); CI runs as root")
    up = box("up", timeout=90 * 60)        # a first build runs debootstrap under emulation
    if up.returncode == 2 and "binfmt_misc cannot be mounted" in up.stderr:
        pytest.skip(up.stderr.strip())
    assert up.returncode == 0, up.stderr
    url = up.stdout.strip().splitlines()[-1]
    state = json.loads(box("status", "--json").stdout)
    yield {"url": url, "root": Path(state["root"]), "state": state}
    down = box("down")
    assert down.returncode == 0, down.stderr
    assert box("status").stdout.strip() == "down"
    assert box("down").returncode == 0        # safe twice


def test_the_box_says_what_it_is(board):
    assert board["url"].startswith("ssh://root@127.83.71.1:")
    assert "python=/opt/whisperkv/venv/bin/python" in board["url"]
    assert box("status").stdout.startswith("up ")
    info = whisperkv("device-info", "--device", board["url"], "--json")
    assert info.returncode == 0, info.stderr
    d = json.loads(info.stdout)
    assert d["arch"] == "aarch64" and d["python"].startswith("3.11") and d["numpy"]
    assert d["soc"]["name"] == "MT8371" and d["soc"]["npu"] == "MDLA 5.3"
    assert d["soc"]["read_from"] == "/sys/firmware/devicetree/base/compatible"
    assert d["tflite"]["ai_edge_litert"] and not d["tflite"]["ai_edge_litert"].startswith("import failed")
    # arm64's /proc/cpuinfo has no "model name": the cores are named from their implementer and part
    assert d["cpu"] == f"{d['cpu_count']}x Neoverse-N1"
    text = whisperkv("device-info", "--device", board["url"])
    assert text.returncode == 0, text.stderr
    absent = {line.split()[0] for line in text.stdout.splitlines() if line.split()[1:] == ["absent"]}
    assert "cpu" not in absent and absent <= ABSENT_ON_THE_BOX


@pytest.fixture(scope="module")
def deployed(board):
    r = whisperkv("deploy", "--device", board["url"], "--backend", "tflite")
    assert r.returncode == 0, r.stderr
    return board


def test_deploy_ships_no_c_source(deployed):
    shipped = list((deployed["root"] / "root/whisperkv").rglob("*"))
    assert any(p.suffix == ".tflite" for p in shipped)
    # the x86-64 C decoder step (device/runner/native/) can never build on an aarch64 board: deploy leaves it out
    assert not [p for p in shipped if p.suffix in (".c", ".h") or "native" in p.parts]


def test_jfk_on_the_box_with_the_pc_references_tokens(deployed):
    """docs/board.md's done-when: up, deploy --backend tflite, then `transcribe test_en.wav --device URL`."""
    pc = whisperkv("transcribe", str(TEST_EN), "--backend", "numpy", "--json")
    assert pc.returncode == 0, pc.stderr
    arm = whisperkv("transcribe", str(TEST_EN), "--device", deployed["url"], "--json")
    assert arm.returncode == 0, arm.stderr
    pc_doc, arm_doc = json.loads(pc.stdout), json.loads(arm.stdout)
    assert arm_doc["text"] == JFK and arm_doc["tokens"] == pc_doc["tokens"]
    # the URL names no backend: the runner's `auto` chose one that runs on an Arm CPU (the registry's arches),
    # never the x86-64 AVX-512 C step
    assert "backend=" not in deployed["url"]
    assert arm_doc["backend"] == "tflite" and REGISTRY[arm_doc["backend"]].runs_on("aarch64")
    assert arm_doc["soc"] == {"name": "MT8371", "npu": "MDLA 5.3"}
    assert arm_doc["samples"] and all(s["rss_mb"] > 10 for s in arm_doc["samples"])


def test_qa_flags_the_clip_that_ran_past_the_throttle_mark(deployed, tmp_path, monkeypatch):
    import core.qa.run as qa_run
    from cli.main import main

    # The same audio twice: the runner's encoder cache spares the second encoder run, the costliest part of
    # an emulated request (minutes), so the suite's two clips cost about one.
    suite = tmp_path / "suite.toml"
    suite.write_text(f'references = "{ROOT / "resources/audio/transcripts.json"}"\n'
                     f'[[clip]]\nname = "cool"\naudio = "{HELLO}"\nmax_wer = 0.5\n'
                     f'[[clip]]\nname = "hot"\naudio = "{HELLO}"\nmax_wer = 0.5\n')
    zone = deployed["root"] / "sys/class/thermal/thermal_zone0/temp"
    real_run_clip = qa_run.run_clip

    def heat_after_the_first_clip(clip, *args, **kw):
        result = real_run_clip(clip, *args, **kw)
        zone.write_text("91500\n")       # past the box's passive trip point (85 C): the board throttles
        return result

    monkeypatch.setattr(qa_run, "run_clip", heat_after_the_first_clip)
    out = tmp_path / "report"
    try:
        main(["qa", str(suite), "--device", deployed["url"], "--out", str(out)])
    finally:
        zone.write_text("45000\n")
    doc = json.loads((out / "qa.json").read_text())
    pc = whisperkv("transcribe", str(HELLO), "--backend", "numpy")
    assert [c["text"] for c in doc["clips"]] == [pc.stdout.strip()] * 2 == ["Hello world."] * 2
    assert doc["meta"]["soc"] == {"name": "MT8371", "npu": "MDLA 5.3"}
    assert doc["devices"][0]["board"]["peak_temp_c"] == 91.5
    assert doc["devices"][0]["board"]["flagged"] == ["hot"]
    cool, hot = (c["board"] for c in doc["clips"])
    assert cool["peak_temp_c"] < 85 and not cool["flag"]
    assert hot["peak_temp_c"] == 91.5 and hot["throttled"] and "throttling" in hot["flag"]
    html = (out / "qa.html").read_text()
    assert "What each board paid" in html and "91.5" in html and "MT8371" in html and "MDLA 5.3" in html


def test_the_doctor_climbs_the_box_with_warnings_and_writes_its_report(deployed, tmp_path):
    """`whisperkv doctor --quick` on the box: every rung passes or warns (the box is an emulation: its speed and
    where its graphs ran are not a board's), and the report is written."""
    r = whisperkv("doctor", "--device", deployed["url"], "--quick", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    by = {rung["name"]: rung for rung in doc["rungs"]}
    assert all(rung["status"] in ("pass", "warn") for rung in doc["rungs"]), r.stderr
    assert by["identity"]["figures"]["soc"] == "MT8371" and by["identity"]["figures"]["runner_kind"] == "emulated"
    assert by["deployed"]["figures"]["mode"] == "tflite" and not by["deployed"]["figures"]["changed"]
    assert by["tokens"]["figures"]["clips"][0]["first_difference"] is None
    assert any("emulation" in w for w in by["speed"]["figures"]["warnings"])
    assert "MT8371" in (tmp_path / "doctor.html").read_text()
