"""Where a backend's graphs ran, read from what each backend's describe() puts in hello's backend_detail."""
from core.model.placement import RanOn, of_backend, ran_on
from device.runner.tflite.tflite_backend import OpPlacement

DLA_DETAIL = {"runtime": "neuron", "library": "/usr/lib/libneuronusdk_runtime.mtk.so.8", "library_version": "8.2.16",
              "api": "V1",
              "graphs": [{"graph": "encoder", "file": "encoder.dla", "sha256": "ab", "runs_on": "dla"},
                         {"graph": "decoder_step", "file": "decoder_step.dla", "sha256": "cd", "runs_on": "dla"}]}


def tflite_detail(delegate, *placements: OpPlacement) -> dict:
    return {"interpreter": "ai_edge_litert", "delegate": delegate, "ops": [p.to_dict() for p in placements]}


def test_the_dla_runs_every_graph_on_the_npu():
    r = ran_on("dla", DLA_DETAIL)
    assert (r.where, r.short, r.npu_shortfall()) == ("npu", "NPU", "")
    assert r.label == "the NPU (encoder.dla, decoder_step.dla on the Neuron runtime)"
    assert r.runtime == "Neuron runtime V1 8.2.16 (/usr/lib/libneuronusdk_runtime.mtk.so.8)"
    assert RanOn.from_dict(r.to_dict()) == r and r.to_dict()["api"] == "V1"
    assert ran_on("tflite", tflite_detail(None)).runtime == ""


def test_a_delegate_that_took_some_ops_says_how_many_stayed_on_the_cpu():
    split = ran_on("tflite", tflite_detail("/usr/lib/libneuron_stable_delegate.so",
                                           OpPlacement("encoder", 300, 300, 1), OpPlacement("decoder_step", 112, 100, 3)))
    assert (split.where, split.ops, split.cpu_ops, split.short) == ("split", 412, 12, "NPU 400/412")
    assert split.npu_shortfall() == "12 of 412 ops ran on the CPU"
    assert "400 of 412 ops; 12 on the CPU" in split.label
    whole = ran_on("tflite", tflite_detail("d.so", OpPlacement("encoder", 300, 300, 1)))
    assert whole.where == "npu" and not whole.npu_shortfall()
    none = ran_on("tflite", tflite_detail("d.so", OpPlacement("encoder", 300, 0, 0)))
    assert none.where == "cpu" and none.npu_shortfall() == "ran on the CPU where the NPU was required"


def test_no_delegate_or_no_detail_is_the_cpu():
    assert ran_on("tflite", tflite_detail(None, OpPlacement("encoder", 300, 0, 0))).where == "cpu"
    for backend, detail in (("numpy", None), ("onnx", {}), ("dla", {"graphs": "garbage"})):
        r = ran_on(backend, detail)
        assert (r.where, r.label, r.npu_shortfall()) == ("cpu", "the CPU", "ran on the CPU where the NPU was required")


def test_an_in_process_backend_is_read_as_its_hello_would_be(model):
    assert of_backend(model.backend).where == "cpu"
