"""The dla path on the emulated arm64 board (tools/board-in-a-box; see test_board_in_a_box.py for what the box
is and is not): a bundle compiled on the PC by the STAND-IN ncc-tflite, `whisperkv deploy --backend dla`, the
STAND-IN Neuron runtime library built on the box by the box's own compiler against its own Python, then
`whisperkv transcribe` on the box's runner through that library. The tokens must equal the PC's NumPy
reference, every graph must have been created once and run by the runtime on the box, and the stop line must
say the graphs ran on the NPU (there is no NPU in the box: the stand-in runs the graphs in LiteRT on the
emulated Arm CPU, so nothing here is a timing).

The box is shared: run this under `flock /tmp/board-box.lock`, as every use of it.
"""
from __future__ import annotations

import json

from tests.device.runner.standin.build import HERE, SOURCES, compile_command, library_name
from tests.device.runner.test_dla_backend import dla_bundle  # noqa: F401  (the compiled bundle, module fixture)
from tests.tools.test_board_in_a_box import HELLO, board, whisperkv  # noqa: F401  (board: the box, up then down)

STANDIN_DIR = "/opt/standin"          # on the box


def build_on_the_box(board) -> str:  # noqa: F811
    """Copy the stand-in's sources onto the box and compile them there; returns the library's path on the box."""
    from device.link.connect import open_transport

    folder = board["root"] / STANDIN_DIR.lstrip("/")
    folder.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        (folder / name).write_bytes((HERE / name).read_bytes())
    t = open_transport(board["url"])
    try:
        include = t.run([t.python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"], timeout=300)
        assert include.rc == 0, include.stderr
        lib = f"{STANDIN_DIR}/{library_name()}"
        built = t.run(compile_command(lib, include.text.strip(), STANDIN_DIR, f"{STANDIN_DIR}/neuron_runtime.c"),
                      timeout=900)
        assert built.rc == 0, built.stderr
        arch = t.run(["uname", "-m"])
    finally:
        t.close()
    assert arch.text.strip() == "aarch64" and (folder / library_name()).is_file()
    return lib


def test_the_dla_on_the_box_gives_the_reference_tokens_and_runs_every_graph_on_the_runtime(board,  # noqa: F811
                                                                                          dla_bundle):  # noqa: F811
    deployed = whisperkv("deploy", "--device", board["url"], "--backend", "dla", "--model", str(dla_bundle))
    assert deployed.returncode == 0, deployed.stderr
    model = board["root"] / "root/whisperkv/model"
    assert {p.name for p in model.iterdir()} == {"encoder.dla", "decoder_step.dla", "token_embedding.npy",
                                                 "positional_embedding.npy", "tokenizer.json", "model.json"}
    lib = build_on_the_box(board)
    device = f"{board['url']}&backend=dla&neuron_lib={lib}"
    pc = whisperkv("transcribe", str(HELLO), "--backend", "numpy", "--language", "en", "--json")
    assert pc.returncode == 0, pc.stderr
    arm = whisperkv("transcribe", str(HELLO), "--device", device, "--language", "en", "--json", timeout=3600)
    assert arm.returncode == 0, arm.stderr
    pc_doc, arm_doc = json.loads(pc.stdout), json.loads(arm.stdout)
    assert arm_doc["tokens"] == pc_doc["tokens"] and "hello" in arm_doc["text"].lower()
    assert arm_doc["backend"] == "dla" and arm_doc["ran_on"]["where"] == "npu"
    assert arm_doc["ran_on"]["label"] == "the NPU (encoder.dla, decoder_step.dla on the Neuron runtime)"
    calls = {g: (model / f"{g}.dla.calls").read_text().split() for g in ("encoder", "decoder_step")}
    assert calls["encoder"] == ["create", "run"]
    assert calls["decoder_step"].count("create") == 1
    assert calls["decoder_step"].count("run") == 4 + len(arm_doc["steps"]) - 1
