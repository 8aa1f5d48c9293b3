"""The board bundle: MTK-form graphs, CPU-side embedding tables, tokenizer and a manifest.

    DIR/encoder.onnx             mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d]
    DIR/decoder_step.onnx        DESIGN.md §1 step signature
    DIR/token_embedding.npy      [n_vocab, d]   looked up on the runner CPU (no GATHER on MDLA)
    DIR/positional_embedding.npy [n_text_ctx, d]
    DIR/tokenizer.json
    DIR/model.json               dims, special tokens, dtype, opset, sha256 of every file
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

from core.errors import ModelError
from core.model.weights import ModelDims, WhisperWeights
from device.runner.bundle import FORMAT, GRAPHS, TABLES, VERSION, read_bundle, sha256_file

DTYPES = ("fp32", "fp16", "int8")


def _io(model) -> dict:
    def shapes(values):
        return {v.name: [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim] for v in values}
    return {"inputs": shapes(model.graph.input), "outputs": shapes(model.graph.output)}


def write_manifest(out: Path, dims: ModelDims, dtype: str, special: dict, model_sha256: str, source: str,
                   graphs: dict, extra: dict | None = None) -> dict:
    files = sorted(p.name for p in out.iterdir() if p.is_file() and p.name != "model.json")
    doc = {"format": FORMAT, "version": VERSION, "dtype": dtype, "opset": _opset(out / GRAPHS["decoder_step"]),
           "dims": asdict(dims), "special_tokens": special, "model_sha256": model_sha256, "source": source,
           "graphs": graphs, "tables": TABLES, "tokenizer": "tokenizer.json",
           "files": {name: sha256_file(out / name) for name in files}, **(extra or {})}
    (out / "model.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return doc


def _opset(path: Path) -> int:
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    return max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def special_tokens(weights: WhisperWeights) -> dict:
    from core.model.tokenizer import WhisperTokenizer

    tok = WhisperTokenizer.from_weights(weights)
    return asdict(tok.special) | {"languages": tok.languages}


def export_bundle(weights: WhisperWeights, out: str | Path, dtype: str = "fp32") -> dict:
    """Write the bundle (fp32, then quantised if asked) and return its manifest."""
    import onnx

    from device.graphs import onnx_graphs as G

    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}", f"use one of: {', '.join(DTYPES)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    p, dims = weights.params, weights.dims
    graphs = {}
    for key, build in (("encoder", G.build_encoder), ("decoder_step", G.build_decoder_step)):
        model = build(p, dims)
        onnx.save(model, str(out / GRAPHS[key]))
        graphs[key] = {"file": GRAPHS[key], **_io(model)}
        del model
    np.save(out / TABLES["token_embedding"], p["decoder.token_embedding.weight"].astype(np.float32))
    np.save(out / TABLES["positional_embedding"], p["decoder.positional_embedding"].astype(np.float32))
    shutil.copyfile(weights.tokenizer_path, out / "tokenizer.json")
    doc = write_manifest(out, dims, "fp32", special_tokens(weights), weights.sha256, weights.source, graphs)
    if dtype != "fp32":
        doc = quantize_bundle(out, out, dtype)
    return doc


def quantize_bundle(src: str | Path, out: str | Path, dtype: str) -> dict:
    """fp16 or int8 (device/graphs/quantize.py) from an fp32 bundle: read the fp32 bundle at `src`, write the `dtype` bundle to `out` (may be the same directory)."""
    import onnx

    b = read_bundle(src)
    if b.dtype != "fp32":
        raise ModelError(f"{src} is already a {b.dtype} bundle", "quantise from an fp32 bundle")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    graphs = {}
    for key, name in GRAPHS.items():
        q = quantize_model(onnx.load(str(b.path / name)), dtype)
        onnx.save(q, str(out / name))
        graphs[key] = b.manifest["graphs"][key] | {"io_dtype": "float16" if dtype == "fp16" else "float32"}
    if out.resolve() != b.path.resolve():
        for name in (*TABLES.values(), "tokenizer.json"):
            shutil.copyfile(b.path / name, out / name)
    return write_manifest(out, b.dims, dtype, b.manifest["special_tokens"], b.model_sha256,
                          b.manifest["source"], graphs, {"quantized_from": "fp32"})
