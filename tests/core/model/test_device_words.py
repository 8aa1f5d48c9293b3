"""One way to name a device (core/model/device_words.py): plain words, never "unknown", empty fields left out."""
from __future__ import annotations

import os

from core.model.device_words import device_words, machine_words, meta_words

CPU = {"where": "cpu", "label": "the CPU", "ops": 0, "cpu_ops": 0, "short": "CPU"}


def test_this_pc_is_named_by_its_cpu_never_unknown():
    meta = {"device": "local", "backend": "onnx", "ran_on": CPU, "soc": {"name": "unknown", "npu": "unknown"},
            "machine": {"arch": "x86_64", "cores": 2}, "runner_kind": "pc", "cache": "on", "dtype": "",
            "cross": ""}
    assert device_words(meta) == "local · this PC (x86-64, 2 cores) · onnx on the CPU · cache on"
    assert "unknown" not in meta_words(meta) and "{" not in meta_words(meta)


def test_a_board_is_named_by_its_soc_and_npu():
    meta = {"device": "ssh://root@board", "soc": {"name": "MT8371", "npu": "MDLA 5.3"}, "backend": "dla",
            "ran_on": {"where": "npu", "label": "the NPU (encoder.dla, decoder_step.dla on the Neuron runtime)"},
            "dtype": "fp16",
            "cross": "kv"}
    assert device_words(meta) == ("ssh://root@board · MT8371 (MDLA 5.3) · dla on the NPU (encoder.dla, "
                                  "decoder_step.dla on the Neuron runtime) · fp16 · kv cross")


def test_a_runner_that_says_nothing_of_its_machine():
    here = machine_words({"device": "local"})
    assert here.startswith("this PC (") and here.endswith(f", {os.cpu_count()} cores)")
    assert machine_words({"device": "ssh://b", "soc": {"name": "unknown"}}) == "a board"
    emulated = {"device": "ssh://b", "runner_kind": "emulated", "machine": {"arch": "aarch64", "cores": 8}}
    assert machine_words(emulated) == "an emulated board (arm64, 8 cores)"
