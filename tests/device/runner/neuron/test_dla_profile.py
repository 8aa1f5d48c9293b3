"""The NPU's own profile, board → PC → view, on the STAND-IN Neuron runtime (see test_dla_backend.py).

The stand-in writes its report as MediaTek documents the real one (MTKNN_ENABLE_PROFILER=1, the file named by
MTKNN_PROFILER_LOG_PATH, CSV tables with the documented columns) when a runtime is released; its per-op times are
its measured run time split by multiply-accumulates, so these tests check the path and the counts, never a figure.
The real runtime's tables must be read on a board (docs/board.md)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from cli.main import main
from core.model.npu_profile import profiles
from tests.conftest import AUDIO, ROOT
from tests.device.runner.neuron.test_dla_backend import calls, dla_bundle, standin  # noqa: F401  (module fixtures)


def test_transcribe_brings_the_profile_back_and_shows_each_graphs_slowest_ops(dla_bundle, standin, tmp_path):  # noqa: F811
    calls(dla_bundle, "encoder"), calls(dla_bundle, "decoder_step")
    url = f"local?backend=dla&model={dla_bundle}&neuron_lib={standin}"
    folder = tmp_path / "profile"
    runner_cache = tmp_path / "cache"      # where the runner's profiler writes (device/runner/cache_paths.py)
    r = subprocess.run([sys.executable, "-m", "cli", "transcribe", str(AUDIO / "test_en.wav"), "--device", url,
                        "--npu-profile", str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, WHISPERKV_CACHE=str(runner_cache)))
    assert r.returncode == 0, r.stderr
    assert "ask not what your country can do for you" in r.stdout
    assert not list(runner_cache.glob("npu-profile-*"))      # the runner's own folder went with it
    assert sorted(p.name for p in folder.iterdir()) == ["w00-decoder_step.csv", "w00-encoder.csv"]
    steps = calls(dla_bundle, "decoder_step").count("run")
    encoder, step = profiles([(p.name, p.read_text()) for p in sorted(folder.iterdir())])
    # the report of each graph counts what that graph's runtime ran: the encoder once, the step once a position
    assert (encoder.graph, encoder.inferences) == ("encoder", 1)
    assert (step.graph, step.inferences) == ("decoder_step", steps)
    assert any("FULLY_CONNECTED" in o.name for o in step.ops) and any("CONV_2D" in o.name for o in encoder.ops)
    assert "encoder (one window):" in r.stderr and "decoder step (one token):" in r.stderr
    assert f"[npu profile: 2 report(s) in {folder}]" in r.stderr


def test_json_carries_the_profile_and_a_backend_off_the_runtime_says_it_wrote_none(dla_bundle, standin, tmp_path,  # noqa: F811
                                                                                  capsys):
    clip = str(AUDIO / "en_asterisk_hello-world.wav")
    url = f"local?backend=dla&model={dla_bundle}&neuron_lib={standin}"
    assert main(["transcribe", clip, "--device", url, "--npu-profile", str(tmp_path / "a"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["graph"] for p in doc["npu_profile"]] == ["encoder", "decoder_step"]
    assert main(["transcribe", clip, "--backend", "onnx", "--npu-profile", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "the runner's Neuron runtime wrote no report (backend onnx)" in err
    assert list((tmp_path / "b").iterdir()) == []


def test_inprocess_has_no_runner_to_profile(capsys):
    assert main(["transcribe", str(AUDIO / "en_asterisk_hello-world.wav"), "--device", "inprocess",
                 "--npu-profile", "/tmp/x"]) == 2
    assert "--npu-profile needs a runner" in capsys.readouterr().err


def test_qa_shows_each_clips_profile_in_json_and_html(dla_bundle, standin, tmp_path):  # noqa: F811
    suite = tmp_path / "suite.toml"
    suite.write_text(f'[[clip]]\naudio = "{AUDIO / "en_asterisk_hello-world.wav"}"\nlanguage = "en"\n'
                     'reference = "Hello world."\nmax_wer = 0.10\n', encoding="utf-8")
    device = f"local?backend=dla&model={dla_bundle}&neuron_lib={standin}"
    assert main(["qa", str(suite), "--device", device, "--npu-profile", "--out", str(tmp_path / "r")]) == 0
    (clip,) = json.loads((tmp_path / "r" / "qa.json").read_text())["clips"]
    # QA asks for the alignment heads' attention (its heatmaps), so every step ran on the attention variant
    assert [p["graph"] for p in clip["npu_profile"]] == ["encoder", "decoder_step_attention"]
    html = (tmp_path / "r" / "qa.html").read_text()
    assert "NPU profile, encoder (one window)" in html
    assert "NPU profile, decoder step with attention (one token)" in html


def test_the_studio_keeps_each_runs_profile_and_shows_it(qtbot, dla_bundle, standin, tmp_path):  # noqa: F811
    from app.work.decode_worker import TranscribeWorker
    from device.link.decoder import open_decoder
    from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait

    def on_the_standin(profile, password):
        return open_decoder(profile.runner_target(password).with_values(model=str(dla_bundle),
                                                                          neuron_lib=str(standin)))

    window = make_window(settings_file(tmp_path / "app.ini"), worker=TranscribeWorker(decoder_factory=on_the_standin))
    qtbot.addWidget(window)
    window.device.fields["backend"].setCurrentText("dla")
    window.device.fields["npu_profile"].setChecked(True)
    open_and_wait(window, "en_asterisk_hello-world.wav")
    run = transcribe_and_wait(window, language="en")
    # the studio asks for attention (its heatmap): the steps ran on the step's attention variant
    assert run.error is None and [p["graph"] for p in run.npu_profile] == ["encoder", "decoder_step_attention"]
    window.show_run(run)
    window.live.flush()
    view = window.npu_view
    assert view.tree.topLevelItemCount() == 2
    assert view.tree.topLevelItem(0).text(2).startswith("encoder (one window), over 1 inferences")
    assert view.tree.topLevelItem(1).childCount() == len(run.npu_profile[1]["ops"])
