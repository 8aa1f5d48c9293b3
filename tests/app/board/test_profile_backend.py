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
    p = DeviceProfile(name="board", kind="adb", serial="X1", backend="tflite", delegate="/vendor/lib64/libneuron.so",
                      min_tokens_per_s=20.0, require_npu=True)
    panel.show_profile(p)
    got = panel.profile()
    assert (got.backend, got.delegate) == ("tflite", "/vendor/lib64/libneuron.so")
    assert got.qa_floor() == {"min_tokens_per_s": 20.0, "require_npu": True}
    panel.show_profile(DeviceProfile())
    assert panel.profile().qa_floor() == {"min_tokens_per_s": 0.0, "require_npu": False}


def test_a_profile_saved_before_the_qa_floor_loads_with_none():
    old = {"name": "board", "kind": "ssh", "host": "b", "backend": "tflite"}
    assert DeviceProfile.from_dict(old).qa_floor() == {"min_tokens_per_s": 0.0, "require_npu": False}
    assert DeviceProfile.from_dict(DeviceProfile(min_tokens_per_s=12.5).to_dict()).min_tokens_per_s == 12.5
