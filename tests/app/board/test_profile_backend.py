"""A device profile carries the runner's settings into the runner's arguments, and the device panel's fields (one per
setting of device/spec/settings.py) round-trip them."""
from device.link.profile import DeviceProfile


def test_backend_and_delegate_reach_the_runner_arguments():
    p = DeviceProfile.from_url("ssh://root@board?backend=tflite&delegate=/usr/lib/libneuron_stable_delegate.so")
    assert p.runner_target().runner_args() == ["--backend", "tflite", "--delegate",
                                               "/usr/lib/libneuron_stable_delegate.so"]
    assert DeviceProfile.from_url("local?backend=tflite").runner_target().runner_args() == [
        "--backend", "tflite", "--workload", "serve"]
    assert DeviceProfile().runner_target().runner_args() == ["--workload", "serve"]      # auto: the runner decides


def test_the_device_panel_round_trips_every_setting(qtbot):
    from app.board.panel import DevicePanel

    panel = DevicePanel()
    qtbot.addWidget(panel)
    url = ("adb://X1?python=/usr/bin/python3&model=/data/m&backend=dla&neuron_lib=/vendor/lib64/libneuron_runtime.so"
           "&neuron_api=v2&neuron_qos=off&npu_profile=on")
    p = DeviceProfile.from_url(url, "board", min_tokens_per_s=20.0, require_npu=True)
    panel.show_profile(p)
    got = panel.profile()
    assert got.url() == url and got.name == "Local runner"       # the combo's name: the profile is not saved yet
    assert got.qa_floor() == {"min_tokens_per_s": 20.0, "require_npu": True}
    assert panel.fields["neuron_lib"].isVisibleTo(panel) and panel.fields["npu_profile"].isVisibleTo(panel)
    panel.show_profile(DeviceProfile())
    assert panel.profile().url() == "local"
    assert panel.profile().qa_floor() == {"min_tokens_per_s": 0.0, "require_npu": False}


def test_the_ssh_fields_make_the_ssh_url(qtbot):
    from app.board.panel import DevicePanel

    panel = DevicePanel()
    qtbot.addWidget(panel)
    url = "ssh://qa@board.local:2222?key=~/.ssh/id_board&trust_host_key=SHA256:abc&backend=onnx"
    panel.show_profile(DeviceProfile.from_url(url, "b"))
    assert (panel.host.text(), panel.user.text(), panel.port.value()) == ("board.local", "qa", 2222)
    assert panel.fields["trust_host_key"].text() == "SHA256:abc" and panel.profile().url() == url
    panel.port.setValue(22)
    assert panel.profile().url().startswith("ssh://qa@board.local?")
