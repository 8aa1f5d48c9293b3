"""The studio unchanged on the native runner: a device profile `local?runner=native` transcribes a clip through the
runner in C, on a compiled bundle and the STAND-IN Neuron runtime built for a process without Python
(tests/device/runner/standin/, OWN_PYTHON; no APU exists here), and the board's hello summary names that runner."""
from __future__ import annotations

from device.link.profile import DeviceProfile
from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library


def test_the_studio_transcribes_through_the_native_runner(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    lib = standin_library("v1+v2", own_python=True)
    window.device.show_profile(DeviceProfile.from_url(
        f"local?runner=native&backend=dla&neuron_lib={lib}&model={compiled_dla_bundle()}"))
    open_and_wait(window, "en_asterisk_hello-world.wav")
    run = transcribe_and_wait(window, language="en", cache=True)
    assert run.error is None and run.stop_reason == "eot" and "hello world" in run.text().lower()
    assert window.board.runner["runner"] == "native"      # the hello summary of the runner that answered
