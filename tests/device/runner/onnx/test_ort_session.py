"""A backend on ONNX Runtime goes with its last reference: nothing of its own refers back to it, so its sessions'
memory (hundreds of MB) is not left to Python's cycle collector, which counts objects, not bytes."""
import gc
import weakref

import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from device.runner.load import load_model_source


@pytest.mark.parametrize("backend", ["onnx", "native-int8b"])
def test_a_backend_that_decoded_goes_with_its_last_reference(backend, clip_mels):
    mels = clip_mels("en_asterisk_hello-world.wav")
    gc.disable()
    try:
        loaded = load_model_source(None, backend)
        assert list(decode_windows(loaded.backend, loaded.tokenizer, mels, DecodeOptions()))[-1].reason == "eot"
        gone = weakref.ref(loaded.backend)
        del loaded
        assert gone() is None
    finally:
        gc.enable()
