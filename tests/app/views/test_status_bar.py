"""The status bar's backend: where the connected runner's graphs run, from its hello (RunnerInfo.summary)."""
from app.views.status_bar import StatusBar
from device.link.runner_info import RunnerInfo
from tests.core.model.test_placement import DLA_DETAIL


def test_the_backend_says_where_its_graphs_run(qtbot):
    bar = StatusBar()
    qtbot.addWidget(bar)
    assert bar.backend.text() == "Backend: —"
    dla = RunnerInfo.from_hello({"protocol": 1, "backend": "dla", "backend_detail": DLA_DETAIL})
    summary = dla.summary()       # what the studio's run record keeps of the runner
    assert (summary["ran_on"]["library"], summary["ran_on"]["library_version"], summary["ran_on"]["api"]) == (
        "/usr/lib/libneuronusdk_runtime.mtk.so.8", "8.2.16", "V1")
    bar.show_device("ssh://root@board", "connected", summary)
    assert bar.backend.text() == "Backend: dla · on NPU"
    assert bar.backend.toolTip() == ("ran on the NPU (encoder.dla, decoder_step.dla on the Neuron runtime)\n"
                                     "Neuron runtime V1 8.2.16 (/usr/lib/libneuronusdk_runtime.mtk.so.8)")
    bar.show_device("local", "connected", RunnerInfo.from_hello({"protocol": 1, "backend": "numpy"}).summary())
    assert bar.backend.text() == "Backend: numpy · on CPU" and bar.backend.toolTip() == "ran on the CPU"


def test_the_model_names_its_dtype_and_cross_form_from_the_hello(qtbot):
    bar = StatusBar()
    qtbot.addWidget(bar)
    hello = {"protocol": 1, "backend": "tflite", "model": {"sha256": "ab" * 32},
             "backend_detail": {"weights": "a16w8", "cross": "absorbed"}}
    bar.show_device("local", "connected", RunnerInfo.from_hello(hello).summary())
    assert bar.model.text() == "Model: a16w8 · absorbed cross · " + "ab" * 6
    bar.show_device("local", "connected", RunnerInfo.from_hello({"protocol": 1, "backend": "numpy"}).summary())
    assert bar.model.text() == "Model: —"
