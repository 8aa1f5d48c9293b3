"""Running the emitted graphs in their runtimes, inputs and outputs by name."""
from __future__ import annotations

import numpy as np

# The ops device/graphs/tflite_graphs.py may write: MDLA 5.3's list as the issue fixes it.
BOARD_OPS = {"FULLY_CONNECTED", "BATCH_MATMUL", "CONV_2D", "SOFTMAX", "GELU", "MEAN", "SQUARED_DIFFERENCE",
             "RSQRT", "ADD", "SUB", "MUL", "DIV", "RESHAPE", "TRANSPOSE", "CONCATENATION", "SPLIT", "SLICE",
             "QUANTIZE", "DEQUANTIZE"}


class TFLiteRunner:
    """A TFLite model loaded once in LiteRT (XNNPACK on this CPU); called with inputs by tensor name."""

    def __init__(self, model: bytes):
        from ai_edge_litert.interpreter import Interpreter

        self.interp = Interpreter(model_content=model, num_threads=2)
        self.interp.allocate_tensors()

    def __call__(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        for d in self.interp.get_input_details():
            self.interp.set_tensor(d["index"], np.ascontiguousarray(feeds[d["name"]], np.float32))
        self.interp.invoke()
        return {d["name"]: self.interp.get_tensor(d["index"]).copy() for d in self.interp.get_output_details()}


def run_tflite(model: bytes, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One invoke of a TFLite model."""
    return TFLiteRunner(model)(feeds)


def run_onnx(model, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One run of an ONNX ModelProto in ONNX Runtime (CPU)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, {i.name: feeds[i.name] for i in sess.get_inputs()})))
