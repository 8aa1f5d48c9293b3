"""The studio's words for a device setting, keyed by the setting's name in device/spec/settings.py: the device
panel's label, a line's placeholder (a check box's text) and, where the CLI's help would not do, the tooltip. They
live here, not in the spec, so the board ships none of them; a test holds that every setting the studio shows has
words and that no words name an unknown setting (tests/app/board/test_setting_words.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from device.spec.backend_rows import ROWS


@dataclass(frozen=True)
class Words:
    label: str
    hint: str = ""                          # the line's placeholder, the check box's text
    tip: Callable[[], str] | None = None    # the tooltip; None: the setting's help


def delegate_tip() -> str:
    """The Delegate tooltip, naming the backends from the registry's rows."""
    # Genio IoT Yocto ships the *stable* delegate, exporting only TFL_TheStableDelegate; stock
    # tflite_runtime.load_delegate looks for tflite_plugin_create_delegate and cannot load it (seen on a Genio 520
    # EVK, Rity 25.1.1, tflite_runtime 2.16.1: bbudaedu/talkybuddy edge/npu_spike/TFLITE-PATH-EVIDENCE.md;
    # tensorflow/tensorflow#79111).
    tflite, dla = ROWS["tflite"], ROWS["dla"]
    return (f"{tflite.name} only: a TFLite delegate library on the device, for {tflite.summary}. On Genio IoT "
            f"Yocto images the runner reaches the NPU through the {dla.name} backend ({dla.summary}): their "
            "Neuron delegate, /usr/lib/libneuron_stable_delegate.so, is a stable delegate exporting only "
            "TFL_TheStableDelegate, and tflite_runtime's load_delegate looks for tflite_plugin_create_delegate "
            "(tensorflow/tensorflow#79111)")


def npu_profile_tip() -> str:
    return ("The runner starts with the Neuron runtime's profiler on; each run's per-op times show in the NPU "
            "profile tab")


WORDS: dict[str, Words] = {
    "runner": Words("Runner"),
    "python": Words("Python", "default interpreter"),
    "dir": Words("Runner dir", "empty: ~/whisperkv, on Android /data/local/tmp/whisperkv"),
    "key": Words("Key file", "~/.ssh/id_ed25519 (empty: agent and defaults)"),
    "trust_host_key": Words("Trust key", "SHA256:… to trust an unknown host key"),
    "model": Words("Model", "the deployed model (a directory on the device)"),
    "backend": Words("Backend"),
    "delegate": Words("Delegate", "a TFLite delegate on the device (tflite only; NPU on Genio: dla)", delegate_tip),
    "neuron_lib": Words("Neuron library", "default: the first of the runtime's known paths"),
    "neuron_api": Words("Neuron API"),
    "neuron_qos": Words("Neuron QoS"),
    "neuron_io": Words("Neuron I/O"),
    "neuron_create": Words("Neuron create"),
    "npu_profile": Words("NPU profile", "profile the NPU (dla, or tflite with the Neuron delegate)", npu_profile_tip),
}
