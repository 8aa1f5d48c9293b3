"""`auto` is exact: the backend it picks, loaded the way the CLI and the runner load it (from the start-up
cache), gives the NumPy reference's tokens on every bundled clip."""
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from device.runner.agent import ROOT
from device.runner.backends import NATIVE, PREFERENCE, available_backends, resolve
from device.runner.load import load_model_source
from device.runner.native_step import supported
from tests.device.runner.compare_helpers import tokens

CLIPS = sorted(p.name for p in (ROOT / "resources" / "audio").glob("*.wav"))


@pytest.fixture(scope="module")
def auto_model():
    loaded = load_model_source(None, "auto")
    first = next(name for name in PREFERENCE if name in available_backends())
    assert loaded.backend.name == resolve("auto") == first
    assert first == NATIVE or not supported()      # where the C step can run, auto runs it
    return loaded


@pytest.mark.parametrize("clip", CLIPS)
def test_auto_gives_the_reference_tokens(clip, auto_model, model, clip_mels, encoder_cache):
    mels = clip_mels(clip)
    ref = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(), encoder_cache=encoder_cache))
    ours = list(auto_model.transcribe(mels, DecodeOptions()))
    assert tokens(ours) == tokens(ref) and len(tokens(ref)) > 0
