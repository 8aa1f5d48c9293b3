"""The start-up cache: the first load writes it, later loads (other processes too) come from it with the
same numbers, and a partial or corrupt cache is rebuilt."""
import json
import mmap

import numpy as np
import pytest

from core.decode.decoding import decode_windows
from core.decode.options import DecodeOptions
from device import protocol as P
from device.runner import startup_cache
from device.runner.load import load_model_source
from device.spec.runtime_config import RuntimeConfig
from tests.device.link_helpers import RawRunner


def cache_dir(root, model):
    return root / model.sha256[:16] / "onnx"


def decode(model, mels):
    return list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions()))[-1]


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("startup-cache")


@pytest.fixture(scope="module")
def first(cache_root):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WHISPERKV_CACHE", str(cache_root))
        return load_model_source(None, "onnx")


@pytest.fixture
def no_weights(monkeypatch, cache_root):
    """The cache's environment, with the weights loader refusing to run: a load must come from the cache."""
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))

    def refuse(path=None):
        raise AssertionError("the weights were loaded")

    monkeypatch.setattr(startup_cache, "load_model", refuse)


def test_the_first_load_writes_the_cache(first, cache_root):
    d = cache_dir(cache_root, first)
    meta = json.loads((d / "meta.json").read_text())
    assert meta["sha256"] == first.sha256 and meta["dims"]["n_text_layer"] == 6
    for name in ("encoder.onnx", "decoder_step.onnx", "token_embedding.npy", "positional_embedding.npy",
                 "tokenizer.json"):
        assert (d / name).is_file()
    assert mapped(first.backend.token_embedding)     # no second fp32 copy beside the sessions


def mapped(arr) -> bool:
    """`arr` is a view of a memory-mapped file."""
    while arr is not None and not isinstance(arr, mmap.mmap):
        arr = getattr(arr, "base", None)
    return arr is not None


def test_a_cached_load_skips_the_weights_and_gives_the_same_numbers(first, no_weights, en_mel):
    again = load_model_source(None, "onnx")
    assert again.sha256 == first.sha256 and again.backend.name == "onnx"
    a, b = decode(first, en_mel), decode(again, en_mel)
    assert a.tokens == b.tokens and a.text == b.text and len(a.tokens) > 10
    k, v = first.backend.encode(en_mel[0])
    k2, v2 = again.backend.encode(en_mel[0])
    assert np.array_equal(k, k2) and np.array_equal(v, v2)


def test_full_still_runs_from_a_cached_start(first, cache_root, monkeypatch, en_mel):
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))
    again = load_model_source(None, "onnx")
    k, v = again.backend.encode(en_mel[0])
    d = again.backend.dims
    x = np.random.default_rng(0).standard_normal((1, 3, d.n_text_state)).astype(np.float32)
    mask = np.triu(np.full((3, 3), -1e9, np.float32), 1)[None, None]
    assert np.array_equal(again.backend.full(x, k, v, mask), first.backend.full(x, k, v, mask))


def test_a_new_runner_process_starts_from_the_cache(first, cache_root, monkeypatch, en_mel):
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))
    r = RawRunner("--backend", "onnx")
    try:
        r.request({"op": "hello", "protocol": P.PROTOCOL})
        hello = r.event()
        assert hello["type"] == "hello" and hello["model"]["sha256"] == first.sha256
        assert "from the start-up cache" in r.stream.stderr_tail()
        desc, payload = P.mel_to_payload(en_mel, "float32")
        r.request({"op": "transcribe", "id": "c1", "mel": desc}, payload)
        done = r.until(lambda ev: ev.get("final") or ev["type"] == "error")[-1]
        assert done["type"] == "done" and done["tokens"] == decode(first, en_mel).tokens
    finally:
        r.close()


@pytest.mark.parametrize("damage", ["no_meta", "truncated", "garbage"])
def test_a_partial_or_corrupt_cache_is_rebuilt(first, cache_root, monkeypatch, en_mel, damage):
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))
    d = cache_dir(cache_root, first)
    if damage == "no_meta":
        (d / "meta.json").unlink()
    elif damage == "truncated":
        with open(d / "decoder_step.onnx.data", "r+b") as f:
            f.truncate(1000)
    else:       # same size, so only opening it can tell
        f = d / "encoder.onnx"
        f.write_bytes(b"\xff" * f.stat().st_size)
    rebuilt = load_model_source(None, "onnx")
    assert decode(rebuilt, en_mel).tokens == decode(first, en_mel).tokens
    assert (d / "meta.json").is_file()
    monkeypatch.setattr(startup_cache, "load_model", lambda path=None: pytest.fail("not cached again"))
    load_model_source(None, "onnx")


@pytest.mark.parametrize("backend", ["onnx-int8", "onnx-int8b"])
def test_a_quantised_backend_is_cached_under_its_own_name(backend, first, cache_root, monkeypatch, en_mel):
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))
    built = load_model_source(None, backend)
    assert (cache_root / first.sha256[:16] / backend / "meta.json").is_file()
    monkeypatch.setattr(startup_cache, "load_model", lambda path=None: pytest.fail("the weights were loaded"))
    again = load_model_source(None, backend)
    assert again.backend.name == backend
    a, b = decode(built, en_mel[:1]), decode(again, en_mel[:1])
    assert a.tokens == b.tokens and a.reason == "eot"


def test_the_absorbed_form_is_cached_apart_and_never_served_as_kv(first, cache_root, monkeypatch, en_mel):
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))
    built = load_model_source(None, "onnx", cross="absorbed")
    d = cache_root / first.sha256[:16] / "onnx.absorbed"
    assert built.backend.cross == "absorbed" and json.loads((d / "meta.json").read_text())["cross"] == "absorbed"
    # Each directory answers for its own form only (a cache written before the forms existed is kv).
    assert startup_cache._read_meta(d, first.sha256, "kv") is None
    assert startup_cache._read_meta(cache_dir(cache_root, first), first.sha256, "absorbed") is None
    monkeypatch.setattr(startup_cache, "load_model", lambda path=None: pytest.fail("the weights were loaded"))
    again, kv = load_model_source(None, "onnx", cross="absorbed"), load_model_source(None, "onnx")
    assert again.backend.cross == "absorbed" and kv.backend.cross == "kv"
    assert again.backend.encode(en_mel[0])[0].shape == (1, 1, 1500, 512)
    a, b = decode(again, en_mel[:1]), decode(first, en_mel[:1])
    assert a.tokens == b.tokens and a.reason == "eot"


@pytest.mark.parametrize("graph", ["attention step", "prefill"])
def test_a_host_graph_is_cached_once_built(graph, first, cache_root, no_weights, en_mel):
    """The first attention step (or batched prefill of a prompt) builds its graph from the weights and leaves
    it in the cache; the next runner's comes from there (its weights loader refuses), with the same numbers."""
    import device.runner.onnx.onnx_backend as ob

    d = cache_dir(cache_root, first)
    name = ob.ATTENTION_GRAPH if graph == "attention step" else ob.PREFILL_GRAPHS["attention"]
    assert not (d / name).exists()
    prompt = first.tokenizer.encode(" A prompt long enough to go in one call.") if graph == "prefill" else []
    opts = DecodeOptions(language="en", attention=True, max_tokens=8, prompt=prompt)
    a = [e for e in decode_windows(first.backend, first.tokenizer, en_mel, opts) if hasattr(e, "attention")]
    assert (d / name).is_file() and (d / (name + ".data")).is_file()
    assert not [p for p in d.iterdir() if p.name.startswith(".")]         # no half-written folder left
    again = load_model_source(None, "onnx")
    again.backend._full_params = lambda: pytest.fail(f"the {graph} graph was rebuilt from the weights")
    if graph == "prefill":
        again.backend._step_attention = first.backend._step_attention      # that one's own caching is tested above
    b = [e for e in decode_windows(again.backend, again.tokenizer, en_mel, opts) if hasattr(e, "attention")]
    assert [e.token for e in a] == [e.token for e in b] and len(a) > 3
    assert all(np.allclose(x.attention, y.attention, atol=1e-3) for x, y in zip(a, b))


def test_kept_buffers_come_from_the_cache_with_the_arena_on_and_the_same_tokens(first, cache_root, monkeypatch, en_mel):
    """runner --workload serve (a live stream, the studio): every session keeps its activations' memory between
    calls, the attention and prefill graphs built on first use included, and the tokens are the same."""
    # word timings step through the attention graph; a draft takes the first tokens through the prefill
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))
    opts = DecodeOptions(language="en", word_timestamps=True, draft=[220] * 8)
    results, arenas = [], []
    for keep in (True, False):
        model = load_model_source(None, "onnx", config=RuntimeConfig(arena=keep))
        results.append(list(decode_windows(model.backend, model.tokenizer, en_mel[:1], opts))[-1])
        b = model.backend
        sessions = [b._encoder, b._step, b._step_attention, *b._prefill.values()]
        arenas.append({(o.enable_cpu_mem_arena, o.enable_mem_pattern) for o in (s.get_session_options() for s in sessions)})
        assert len(sessions) == 4
    assert arenas == [{(True, False)}, {(False, False)}]
    assert results[0].tokens == results[1].tokens and results[0].reason == "eot"


def test_a_one_shot_model_spins_its_worker_threads_within_a_run_only(first, cache_root, monkeypatch, en_mel):
    """runner --workload one-shot (`whisperkv transcribe`): the sessions from the start-up cache let their workers spin,
    never past a run's end; without it they never spin. The tokens are the same."""
    monkeypatch.setenv("WHISPERKV_CACHE", str(cache_root))
    entries, tokens = [], []
    for spin in (True, False):
        model = load_model_source(None, "onnx", config=RuntimeConfig(spin=spin))
        tokens.append(list(decode_windows(model.backend, model.tokenizer, en_mel[:1], DecodeOptions(language="en")))[-1].tokens)
        entries.append({(o.get_session_config_entry("session.intra_op.allow_spinning"),
                         o.get_session_config_entry("session.force_spinning_stop"))
                        for o in (s.get_session_options() for s in (model.backend._encoder, model.backend._step))})
    assert entries == [{("1", "1")}, {("0", "1")}]
    assert tokens[0] == tokens[1] and len(tokens[0]) > 10
