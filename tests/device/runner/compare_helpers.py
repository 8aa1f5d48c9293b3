"""Two backends on identical inputs, step by step: the decode follows the reference, the other is measured."""
import numpy as np


class Compare:
    """Runs both backends on identical inputs each step; decodes along the NumPy results."""

    def __init__(self, ref, other):
        self.ref, self.other = ref, other
        self.dims, self.name = ref.dims, "compare"
        self.head_major = getattr(ref, "head_major", False)      # the layout encode() returns: the reference's
        self.token_embedding, self.positional_embedding = ref.token_embedding, ref.positional_embedding
        self.step_diffs: list[float] = []
        self.kv_diffs: list[float] = []

    def encode(self, mel):
        return self.ref.encode(mel)

    def step(self, *args):
        a, b = self.ref.step(*args), self.other.step(*args)
        self.step_diffs.append(float(np.abs(a[0] - b[0]).max()))
        self.kv_diffs.append(max(float(np.abs(a[1] - b[1]).max()), float(np.abs(a[2] - b[2]).max())))
        return a


def tokens(events):
    return [e.token for e in events if e.type == "token"]


def three_ways(backend, tokenizer, mels) -> tuple[list[int], list[int], list[int]]:
    """The tokens of a cached decode, an uncached one (the backend's full()) and one with attention (its
    step_with_attention), on one encoder pass."""
    from core.decode.decoding import decode_windows
    from core.decode.options import DecodeOptions
    from core.model.encoder_cache import EncoderCache

    cache = EncoderCache(1 << 28)
    return tuple(tokens(decode_windows(backend, tokenizer, mels, opts, encoder_cache=cache))
                 for opts in (DecodeOptions(), DecodeOptions(cache=False), DecodeOptions(attention=True)))
