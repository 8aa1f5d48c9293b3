"""`auto` is exact: the backend it picks, loaded the way the CLI and the runner load it (from the start-up
cache), gives the NumPy reference's tokens on every bundled clip."""
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from device.runner.backends import REGISTRY, available_backends, resolve
from device.runner.load import load_model_source
from device.runner.native.library import supported
from device.runner.serve.agent import ROOT
from tests.device.runner.compare_helpers import tokens

CLIPS = sorted(p.name for p in (ROOT / "resources" / "audio").glob("*.wav"))


@pytest.fixture(scope="module")
def auto_model():
    loaded = load_model_source(None, "auto")
    preference = sorted((s.row for s in REGISTRY.values() if s.row.auto), key=lambda s: s.auto)
    first = next(s.name for s in preference if s.name in available_backends())
    assert loaded.backend.name == resolve("auto") == first
    assert first == "native-int8b" or not supported()      # where the C step can run, auto runs it
    return loaded


@pytest.mark.parametrize("clip", CLIPS)
def test_auto_gives_the_reference_tokens(clip, auto_model, model, clip_mels, encoder_cache):
    mels = clip_mels(clip)
    ref = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(), encoder_cache=encoder_cache))
    ours = list(decode_windows(auto_model.backend, auto_model.tokenizer, mels, DecodeOptions()))
    assert tokens(ours) == tokens(ref) and len(tokens(ref)) > 0


@pytest.mark.parametrize("clip", CLIPS)
def test_auto_gives_the_reference_tokens_as_the_cli_feeds_it(clip, auto_model, model):
    """As `whisperkv transcribe` decodes a file on its local runner: a window at a time from where the last one
    ended, with its true number of frames (timestamp tokens to seek by when the audio is longer than a window), the
    mel as the link sends it, in float16. onnx-int8b drops a comma of demo-congrats this way."""
    import numpy as np

    from core.decode.window_feed import decode_source
    from core.model.mel_file import MelSource

    def run(loaded):
        source = MelSource.of_file(ROOT / "resources" / "audio" / clip)
        return tokens(decode_source(source, DecodeOptions(), lambda mel, opts, n: loaded.transcribe(
            mel.astype(np.float16).astype(np.float32), opts, n_frames=n)))

    ref = run(model)
    assert run(auto_model) == ref and len(ref) > 0
