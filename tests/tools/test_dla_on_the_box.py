"""The dla path on the board in a box (tests/tools/conftest.py's `board`, a STAND-IN for a Genio 520): a bundle
compiled on the PC by the STAND-IN ncc-tflite, `whisperkv deploy --backend dla`, then transcripts through the
STAND-IN Neuron runtime library the box carries at its Yocto path (built while its root filesystem was made;
there is no compiler on the box). The stand-in hands each graph to the STAND-IN APU, a process on the PC that
computes it in LiteRT (tools/board_box/standin.py), so the tokens must equal the PC's NumPy reference and
nothing here is a timing.

The one full test_en.wav transcription of the suite on the box is here (an emulated encoder window costs
minutes); every other run is the short hello-world clip, twice in one QA suite so that the runner's encoder
cache spares the second encoder run. Run under `flock /tmp/board-box.lock`.
"""
from __future__ import annotations

import json
import shutil

import pytest

from tests.device.runner.neuron.test_dla_backend import dla_bundle  # noqa: F401  (the compiled bundle, module fixture)
from tests.device.runner.standin.neuron_compute import MAGIC
from tests.tools.conftest import HELLO, JFK, ROOT, TEST_EN, whisperkv

V1V2_LIB = "/opt/standin/v1v2/libneuronusdk_runtime.mtk.so.8"     # tools/board_box/standin.py
MODEL_FILES = {"encoder.dla", "decoder_step.dla", "token_embedding.npy", "positional_embedding.npy",
               "tokenizer.json", "model.json"}


@pytest.fixture(scope="module")
def deployed(board, dla_bundle):  # noqa: F811
    r = whisperkv("deploy", "--device", board["url"], "--backend", "dla", "--model", str(dla_bundle))
    assert r.returncode == 0, r.stderr
    return board


@pytest.fixture(scope="module")
def plain_bundle(dla_bundle, tmp_path_factory):  # noqa: F811
    """The same bundle with each `.dla` a plain TFLite file (the stand-in ncc-tflite's wrapping taken off)."""
    bundle = tmp_path_factory.mktemp("plain") / "bundle"
    shutil.copytree(dla_bundle, bundle)
    for dla in bundle.glob("*.dla"):
        data = dla.read_bytes()
        assert data.startswith(MAGIC)
        dla.write_bytes(data[len(MAGIC):])
    return bundle


def reference(audio) -> dict:
    pc = whisperkv("transcribe", str(audio), "--backend", "numpy", "--json")
    assert pc.returncode == 0, pc.stderr
    return json.loads(pc.stdout)


def calls(board, graph: str) -> list[str]:
    f = board["root"] / f"root/whisperkv/model/{graph}.dla.calls"
    return f.read_text().split() if f.is_file() else []


def test_deploy_ships_the_dla_bundle_and_no_c_source(deployed):
    shipped = list((deployed["root"] / "root/whisperkv").rglob("*"))
    assert {p.name for p in (deployed["root"] / "root/whisperkv/model").iterdir()} >= MODEL_FILES
    # the x86-64 C decoder step (device/runner/native/) can never build on an aarch64 board: deploy leaves it out
    assert not [p for p in shipped if p.suffix in (".c", ".h") and p.parent.name != "spec" or "native" in p.parts]
    # the spec's C header travels with the spec (a native runner reads it); no C source does
    assert [p.name for p in shipped if p.suffix == ".h"] == ["whisperkv_spec.h"]


def test_jfk_through_the_v1_standin_found_at_its_yocto_path(deployed):
    """Issue 43's done-when: the URL names no backend and no neuron_lib; the runner finds the library where a
    Genio IoT Yocto image has it and calls it through the V1 API, the only one that build exports."""
    for graph in ("encoder", "decoder_step"):
        (deployed["root"] / f"root/whisperkv/model/{graph}.dla.calls").unlink(missing_ok=True)
    pc = reference(TEST_EN)
    arm = whisperkv("transcribe", str(TEST_EN), "--device", deployed["url"], "--json", timeout=3600)
    assert arm.returncode == 0, arm.stderr
    doc = json.loads(arm.stdout)
    assert "neuron_lib=" not in deployed["url"] and "backend=" not in deployed["url"]
    assert doc["text"] == JFK and doc["tokens"] == pc["tokens"]
    assert doc["backend"] == "dla" and doc["ran_on"]["where"] == "npu"
    assert doc["soc"] == {"name": "MT8371", "npu": "MDLA 5.3"}
    assert calls(deployed, "encoder") == ["create", "run"]
    assert calls(deployed, "decoder_step").count("create") == 1
    assert calls(deployed, "decoder_step").count("run") == 4 + len(doc["steps"]) - 1


def test_qa_on_hello_world_via_the_v1v2_build_on_plain_tflite_dlas_flags_the_hot_clip(deployed, plain_bundle,
                                                                                      tmp_path, monkeypatch):
    """The V1+V2 build, named by the URL, on a bundle whose `.dla` files are plain TFLite: the reference's
    tokens on hello-world, twice (the second clip's encoder served by the runner's cache), the second hot."""
    import core.qa.run as qa_run
    from cli.main import main

    r = whisperkv("deploy", "--device", deployed["url"], "--backend", "dla", "--model", str(plain_bundle))
    assert r.returncode == 0, r.stderr
    assert (deployed["root"] / "root/whisperkv/model/encoder.dla").read_bytes()[4:8] == b"TFL3"

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
        main(["qa", str(suite), "--device", f"{deployed['url']}&neuron_lib={V1V2_LIB}", "--out", str(out)])
    finally:
        zone.write_text("45000\n")
    doc = json.loads((out / "qa.json").read_text())
    pc = reference(HELLO)
    assert [c["token_ids"] for c in doc["clips"]] == [pc["tokens"]] * 2
    assert [c["text"] for c in doc["clips"]] == ["Hello world."] * 2
    assert doc["meta"]["soc"] == {"name": "MT8371", "npu": "MDLA 5.3"}
    assert doc["devices"][0]["board"]["peak_temp_c"] == 91.5
    assert doc["devices"][0]["board"]["flagged"] == ["hot"]
    cool, hot = (c["board"] for c in doc["clips"])
    assert cool["peak_temp_c"] < 85 and not cool["flag"]
    assert hot["peak_temp_c"] == 91.5 and hot["throttled"] and "throttling" in hot["flag"]
    html = (out / "qa.html").read_text()
    assert "What each board paid" in html and "91.5" in html and "MT8371" in html and "MDLA 5.3" in html


def test_check_board_in_the_studio_climbs_the_box_without_the_bundle(qtbot, deployed, dla_bundle,  # noqa: F811
                                                                       tmp_path):
    """Issue 50's done-when: the studio's Check board, pressed for a profile made from the box's URL (no bundle in
    it) with a fresh settings store, climbs the doctor's quick ladder on the box: every rung passes or warns. The QA
    test before it deployed the plain-TFLite `.dla`s: deploy the compiled bundle again first."""
    from device.doctor.ladder import NAMES
    from device.link.profile import DeviceProfile
    from tests.app.conftest import make_window, settings_file, wait_for

    again = whisperkv("deploy", "--device", deployed["url"], "--backend", "dla", "--model", str(dla_bundle))
    assert again.returncode == 0, again.stderr
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    window.device.show_profile(DeviceProfile.from_url(deployed["url"]))
    window.device.check_button.click()
    wait_for(lambda: window.device.check_button.isEnabled() and window.board.checked, "the check to finish", 3600)
    report = window.board.checked
    assert [r["name"] for r in report["rungs"]] == list(NAMES)
    assert all(r["status"] in ("pass", "warn") for r in report["rungs"]), report["lines"]
    by = {r["name"]: r for r in report["rungs"]}
    assert by["deployed"]["figures"]["against"] == "manifest.json" and by["loads"]["figures"]["backend"] == "dla"
    assert window.device.info.toPlainText() == f"Check board of {report['device']}: no rung failed."


def test_the_doctor_climbs_the_box_without_the_bundle_and_names_a_changed_file(deployed, dla_bundle,  # noqa: F811
                                                                              tmp_path):
    """Issue 50's done-when: `whisperkv doctor --quick` on the replica WITHOUT --model and without its STAND-IN
    /dev/apusys: every rung passes or warns (an emulation with a STAND-IN runtime: its SoC is files, its speed and
    placement not a board's; no /dev/apusys* warns at runtime and the loads rung decides), what needs the bundle
    read from the board's model.json and deploy's record, and the report is written; then one deployed file edited
    makes `deployed` fail and name it. The QA test before it deployed the plain-TFLite `.dla`s: deploy the compiled
    bundle again first."""
    again = whisperkv("deploy", "--device", deployed["url"], "--backend", "dla", "--model", str(dla_bundle))
    assert again.returncode == 0, again.stderr
    apusys = deployed["root"] / "dev" / "apusys"
    apusys.unlink()
    try:
        r = whisperkv("doctor", "--device", deployed["url"], "--quick", "--json", "--out", str(tmp_path),
                      timeout=3600)
    finally:
        apusys.touch()
    assert r.returncode == 0, r.stderr
    by = {rung["name"]: rung for rung in json.loads(r.stdout)["rungs"]}
    assert all(rung["status"] in ("pass", "warn") for rung in by.values()), r.stderr
    assert by["runtime"]["status"] == "warn" and by["runtime"]["figures"]["apusys"] == []
    assert any("/dev/apusys*" in w and "loads rung decides" in w for w in by["runtime"]["figures"]["warnings"])
    assert by["identity"]["figures"]["soc"] == "MT8371" and by["identity"]["figures"]["bundle_soc"] == "mt8371"
    assert by["runtime"]["figures"]["api"] == "V1" and by["runtime"]["figures"]["dla_compiler"]
    assert by["deployed"]["figures"]["mode"] == "dla" and by["deployed"]["figures"]["against"] == "manifest.json"
    assert by["tokens"]["figures"]["clips"][0]["first_difference"] is None
    assert by["loads"]["figures"]["npu"] == "stand-in" and "MT8371" in (tmp_path / "doctor.html").read_text()
    with open(deployed["root"] / "root/whisperkv/model/decoder_step.dla", "ab") as f:
        f.write(b"\0")
    r = whisperkv("doctor", "--device", deployed["url"], "--quick", "--json", timeout=3600)
    by = {rung["name"]: rung for rung in json.loads(r.stdout)["rungs"]}
    assert r.returncode == 1 and by["deployed"]["status"] == "fail" and by["loads"]["status"] == "not-run"
    assert by["deployed"]["figures"]["changed"] == ["model/decoder_step.dla"]
    assert "model/decoder_step.dla" in by["deployed"]["figures"]["decided_by"]
    assert f"--model {dla_bundle}" in by["deployed"]["fix"] and "--backend dla" in by["deployed"]["fix"]
