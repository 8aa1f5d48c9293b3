"""A window's first tokens in one batched call, with a draft of the tokens expected next: the decode gives
the tokens and events of stepping one by one, through fewer calls. The batched prefill here is a real
backend's own steps run inside one call (a stand-in with bit-identical numbers), so any difference is the
stepper's bookkeeping: which logits, attention, cache length and K/V each token gets. The backend is ONNX
Runtime fp32 seen through its steps only: the NumPy reference's tokens, many times faster a step."""
from dataclasses import replace

import numpy as np
import pytest

from core.decode.decoding import decode_windows, encoder_features
from core.decode.options import DecodeOptions
from core.decode.steppers import PREFILL_MIN, CachedStepper
from core.model.backend import PrefillBackend
from core.model.kv_cache import KVCache, to_stacked

BACKEND_FIELDS = ("dims", "name", "token_embedding", "positional_embedding", "alignment_heads", "encode",
                  "cache_layout", "head_major")


class Stepping:
    """A backend through its steps only, without its own `prefill`: the decode steps one token at a time."""

    def __init__(self, backend):
        for name in (*BACKEND_FIELDS, "step", "step_with_attention"):
            if hasattr(backend, name):
                setattr(self, name, getattr(backend, name))


class SteppedPrefill:
    """The reference backend with a `prefill` that steps through its T tokens: counts the graph calls."""

    def __init__(self, reference):
        self.ref, self.steps, self.prefills = reference, 0, []
        for name in BACKEND_FIELDS:
            if hasattr(reference, name):
                setattr(self, name, getattr(reference, name))

    def step(self, *args):
        self.steps += 1
        return self.ref.step(*args)

    def step_with_attention(self, *args):
        self.steps += 1
        return self.ref.step_with_attention(*args)

    def prefill(self, x, cross_k, cross_v, mask, attention=False):
        n = x.shape[1]
        self.prefills.append(n)
        assert mask.shape == (1, 1, n, n) and mask[0, 0, 0, 1] < -1e8 and mask[0, 0, -1, 0] == 0
        cache = KVCache(self.dims.n_text_layer, self.dims.n_text_ctx, self.dims.n_text_state,
                        **getattr(self.ref, "cache_layout", {}))
        outs = []
        for i in range(n):
            args = (x[:, i:i + 1], cache.k, cache.v, cross_k, cross_v, cache.mask())
            out = self.ref.step_with_attention(*args) if attention else self.ref.step(*args)
            cache.write(out[1], out[2])
            outs.append(out)
        logits = np.concatenate([o[0] for o in outs], axis=1)
        k, v = to_stacked(cache.k[:, :, :n]), to_stacked(cache.v[:, :, :n])     # [L, 1, T, d], as prefill gives
        return (logits, k, v, np.concatenate([o[3] for o in outs], axis=1)) if attention else (logits, k, v)


@pytest.fixture(scope="module")
def model(onnx_model):
    """The session's ONNX Runtime fp32 model, its backend seen through its steps only."""
    return replace(onnx_model, backend=Stepping(onnx_model.backend))


@pytest.fixture(scope="module")
def window(clip_mels):
    return clip_mels("test_en.wav")[:1]


def run(backend, tokenizer, mels, encoder_cache, **options):
    events = list(decode_windows(backend, tokenizer, mels, DecodeOptions(language="en", word_timestamps=True,
                                                                         **options), encoder_cache=encoder_cache))
    toks = [e for e in events if e.type == "token"]
    return ([e.token for e in toks], [e.cache_len for e in toks], [e.cache_bytes for e in toks],
            [e.attention.tolist() for e in toks], [e.logprob for e in toks], events[-1].words)


def test_the_backend_takes_the_protocol(model):
    assert isinstance(SteppedPrefill(model.backend), PrefillBackend)
    assert not isinstance(model.backend, PrefillBackend)       # the reference steps; the decode works either way


def test_a_prompt_goes_in_one_call_and_gives_the_tokens_of_stepping(model, window, encoder_cache):
    prompt = model.tokenizer.encode(" And so my fellow Americans, listen.")
    stepped = run(model.backend, model.tokenizer, window, encoder_cache, prompt=prompt)
    backend = SteppedPrefill(model.backend)
    batched = run(backend, model.tokenizer, window, encoder_cache, prompt=prompt)
    assert batched == stepped and len(stepped[0]) > 20
    assert backend.prefills == [1 + len(prompt) + 4]           # <|startofprev|>, the prompt, the SOT sequence
    assert backend.steps == len(stepped[0]) - 1                # one step per sampled token but the last


@pytest.mark.parametrize("draft", ["all", "first half", "wrong at 3", "longer", "unrelated"])
def test_a_draft_gives_the_tokens_and_events_of_stepping(model, window, encoder_cache, draft):
    prompt = model.tokenizer.encode(" Listen.")
    stepped = run(model.backend, model.tokenizer, window, encoder_cache, prompt=prompt)
    toks = stepped[0]
    guess = {"all": toks, "first half": toks[:len(toks) // 2], "wrong at 3": toks[:3] + [toks[3] + 1] + toks[4:],
             "longer": toks + toks[:5], "unrelated": model.tokenizer.encode(" Nothing like it at all.")}[draft]
    backend = SteppedPrefill(model.backend)
    drafted = run(backend, model.tokenizer, window, encoder_cache, prompt=prompt, draft=guess)
    assert drafted == stepped
    kept = next((i for i, (a, b) in enumerate(zip(guess, toks)) if a != b), min(len(guess), len(toks)))
    assert backend.prefills == [1 + len(prompt) + 4 + len(guess)]
    # every sampled token fed after the prefill that was not served from the draft is a step
    assert backend.steps == len(toks) - 1 - min(kept, len(toks) - 1)


def test_a_short_prefix_steps_one_by_one(model, window, encoder_cache):
    backend = SteppedPrefill(model.backend)
    run(backend, model.tokenizer, window, encoder_cache)        # <|startoftranscript|>, en, transcribe, notimestamps
    assert backend.prefills == [] and 4 < PREFILL_MIN


def test_a_rejected_draft_leaves_the_cache_as_stepping_would(model, window, encoder_cache):
    (cross_k, cross_v), _ = encoder_features(model.backend, window[0], encoder_cache)
    tokens = model.tokenizer.sot_sequence("en", "transcribe", False)
    one = CachedStepper(SteppedPrefill(model.backend), cross_k, cross_v)
    two = CachedStepper(model.backend, cross_k, cross_v)
    one.feed(tokens, draft=[440, 1002, 2000, 3000, 4000])
    assert one.length == 4 and one.cache.cache_len == 9
    for t in tokens:
        two.advance(t)
    assert np.array_equal(one.advance(440), two.advance(440))   # served from the draft
    assert np.array_equal(one.advance(7), two.advance(7))       # the draft went another way: a real step
    assert one.length == two.length == 6 and one.cache.cache_len == 6
    assert np.array_equal(one.cache.k[:, :, :6], two.cache.k[:, :, :6])
    assert one.bytes_used == two.bytes_used


@pytest.mark.parametrize("draft", ["all", "wrong at 3"])
def test_each_token_says_whether_it_came_from_the_draft(model, window, encoder_cache, draft):
    """TokenEvent.drafted: the first sampled token comes from the batched call itself; the next ones from the
    draft as long as it holds; from the first difference on, from steps."""
    prompt = model.tokenizer.encode(" Listen.")
    opts = dict(language="en", prompt=prompt)
    toks = [e.token for e in decode_windows(model.backend, model.tokenizer, window, DecodeOptions(**opts),
                                            encoder_cache=encoder_cache) if e.type == "token"]
    guess = toks if draft == "all" else toks[:3] + [toks[3] + 1] + toks[4:]
    events = [e for e in decode_windows(SteppedPrefill(model.backend), model.tokenizer, window,
                                        DecodeOptions(**opts, draft=guess), encoder_cache=encoder_cache)
              if e.type == "token"]
    flags = [e.drafted for e in events]
    # token i (i >= 1) was sampled from the logits after guess[i-1]: drafted while guess[:i] matched
    kept = len(guess) if draft == "all" else 3
    assert flags == [False] + [i <= kept for i in range(1, len(events))]
    stepped = list(decode_windows(model.backend, model.tokenizer, window, DecodeOptions(**opts),
                                  encoder_cache=encoder_cache))
    assert not any(e.drafted for e in stepped if e.type == "token")
