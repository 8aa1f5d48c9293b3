"""Live transcription on the NPU: both stream policies through the `dla` backend on a STAND-IN Neuron runtime (no
APU exists here; the stand-in runs each `.dla`'s TFLite graph in LiteRT, fp16 slots in and out). Every pass asks for
the alignment heads' cross-attention, which the step's attention variant (`decoder_step_attention.dla`, compiled
beside the step) serves; the committed text must be the NumPy reference's stream's. The reference stream runs on
ONNX Runtime fp32, which gives the NumPy reference's tokens (its registry row is `exact`) three times faster here;
both policies' NumPy streams of test_en commit the same text (docs/board.md)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.stream.policies import POLICIES
from tests.conftest import AUDIO, ROOT
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library


def stream(device: str, policy: str, *extra: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "cli", "stream", str(AUDIO / "test_en.wav"), "--device", device,
                        "--policy", policy, "--language", "en", "--json", *extra], cwd=ROOT, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_both_policies_stream_on_the_dla_and_commit_the_references_text(policy):
    bundle, lib = compiled_dla_bundle(), standin_library("v1")
    calls = bundle / "decoder_step_attention.dla.calls"
    calls.unlink(missing_ok=True)
    got = stream(f"local?backend=dla&neuron_lib={lib}", policy, "--model", str(bundle))
    # The bundle was compiled without --windows: every pass is heard in 30 s, and so is the reference's.
    assert {p["window_s"] for p in got["passes"]} == {30}
    want = stream("local?backend=onnx", policy, "--window-floor", "30")
    assert got["backend"] == "dla" and got["text"] == want["text"] and "what your country can do" in got["text"]
    runs = calls.read_text().split()     # every pass's steps ran on the attention variant's runtime, created once
    assert runs.count("create") == 1 and runs.count("run") > len(got["passes"])
