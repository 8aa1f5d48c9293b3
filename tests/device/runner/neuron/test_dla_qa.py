"""A QA suite against the dla backend on the STAND-IN Neuron runtime (see test_dla_backend.py), run through the
local runner as `whisperkv qa` runs it: a suite that requires the NPU passes there, and its speed floor still
fails a clip that decodes below it, naming the speed."""
from __future__ import annotations

import json

from cli.main import main
from tests.conftest import AUDIO
from tests.device.runner.neuron.test_dla_backend import dla_bundle, standin  # noqa: F401  (module fixtures)

HELLO = AUDIO / "en_asterisk_hello-world.wav"


def suite(tmp_path, floor: float):
    path = tmp_path / "suite.toml"
    path.write_text(f'[defaults]\nrequire_npu = true\nmin_tokens_per_s = {floor}\n[[clip]]\naudio = "{HELLO}"\n'
                    'language = "en"\nreference = "Hello world."\nmax_wer = 0.10\n', encoding="utf-8")
    return path


def test_the_npu_requirement_passes_on_the_dla_and_the_floor_still_holds(dla_bundle, standin, tmp_path,  # noqa: F811
                                                                         capsys):
    device = f"local?backend=dla&model={dla_bundle}&neuron_lib={standin}"
    assert main(["qa", str(suite(tmp_path, 0.001)), "--device", device, "--out", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "qa.json").read_text())
    assert doc["meta"]["backend"] == "dla" and doc["meta"]["ran_on"]["where"] == "npu"
    assert (doc["meta"]["ran_on"]["library"], doc["meta"]["ran_on"]["api"]) == (str(standin), "V1")
    assert f"Neuron runtime V1 0.0.1, native I/O ({standin})" in (tmp_path / "r" / "qa.html").read_text()
    (clip,) = doc["clips"]
    assert clip["passed"] and clip["ran_on"] == "NPU" and clip["tokens_per_s"] > 0.001
    capsys.readouterr()
    assert main(["qa", str(suite(tmp_path, 100000)), "--device", device, "--out", str(tmp_path / "r2")]) == 1
    out = capsys.readouterr().out
    (clip,) = json.loads((tmp_path / "r2" / "qa.json").read_text())["clips"]
    assert clip["failures"] == [f"{clip['tokens_per_s']:.1f} tokens/s < floor 100000"]
    assert "tokens/s < floor 100000" in out and "NPU was required" not in out
