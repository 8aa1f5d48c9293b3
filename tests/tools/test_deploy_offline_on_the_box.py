"""Deploy on a board with no route to any package index (tests/tools/conftest.py's `offline_board`, the STAND-IN
Genio 520 cut off: no name resolves, pip's index is a closed port): the box's system Python has NumPy but no
TFLite interpreter, so `whisperkv deploy --backend tflite` fetches the interpreter's wheel on this PC for the
box's Python and tags, installs it there with no index, and hello-world then gives the PC's NumPy reference's
tokens through the tflite backend; a second deploy installs nothing. Run under `flock /tmp/board-box.lock`.
"""
from __future__ import annotations

import json

from tests.tools.conftest import HELLO, on_box, whisperkv

DIR = "/root/whisperkv-tflite"      # apart from the dla tests' deployment


def deploy(url: str) -> dict:
    r = whisperkv("deploy", "--device", url, "--backend", "tflite", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_deploy_brings_the_interpreter_offline_and_then_installs_nothing(offline_board):
    assert on_box(offline_board, "python3 -c 'import tflite_runtime'").returncode != 0     # the image lacks it
    url = f"{offline_board['url']}&dir={DIR}"
    first = deploy(url)
    assert first["packages"]["installed"] in (["tflite-runtime"], ["ai-edge-litert"]), first["packages"]
    pc = whisperkv("transcribe", str(HELLO), "--backend", "numpy", "--language", "en", "--json")
    assert pc.returncode == 0, pc.stderr
    arm = whisperkv("transcribe", str(HELLO), "--device", f"{url}&backend=tflite", "--language", "en", "--json")
    assert arm.returncode == 0, arm.stderr
    arm_doc = json.loads(arm.stdout)
    assert arm_doc["tokens"] == json.loads(pc.stdout)["tokens"] and arm_doc["backend"] == "tflite"
    assert deploy(url)["packages"]["installed"] == []
