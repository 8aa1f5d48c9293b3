"""A device profile carries the runner's backend and delegate into the device URL the link uses."""
from app.board.profile import DeviceProfile


def test_backend_and_delegate_reach_the_runner_arguments():
    p = DeviceProfile(kind="ssh", host="board", user="root", backend="tflite",
                      delegate="/usr/lib/libneuron_stable_delegate.so")
    assert p.target().runner_args() == ["--backend", "tflite", "--delegate", "/usr/lib/libneuron_stable_delegate.so"]
    assert DeviceProfile(kind="local", backend="tflite").target().runner_args() == [
        "--backend", "tflite", "--workload", "serve"]
    assert DeviceProfile().target().runner_args() == ["--workload", "serve"]      # auto: the runner decides


def test_the_device_panel_round_trips_backend_and_delegate(qtbot):
    from app.board.panel import DevicePanel

    panel = DevicePanel()
    qtbot.addWidget(panel)
    p = DeviceProfile(name="board", kind="adb", serial="X1", backend="tflite", delegate="/vendor/lib64/libneuron.so")
    panel.show_profile(p)
    got = panel.profile()
    assert (got.backend, got.delegate) == ("tflite", "/vendor/lib64/libneuron.so")
