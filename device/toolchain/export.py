"""The board bundle: MTK-form graphs (ONNX and/or TFLite), CPU-side embedding tables, tokenizer, manifest.

    DIR/encoder.onnx             mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d]      (format onnx)
    DIR/decoder_step.onnx        the step signature in docs/protocol.md             (format onnx)
    DIR/encoder.tflite           the same encoder, builtin MDLA 5.3 ops only           (format tflite)
    DIR/decoder_step.tflite      the same step, tensors named as in docs/protocol.md   (format tflite)
    DIR/encoder_10s.tflite, …    with --windows: the encoder of each shorter window (mel [1,80,2A'] -> [L,1,A',d]);
                                 the step then takes one more input, `cross_mask` [1,1,1,1500]
    DIR/token_embedding.npy      [n_vocab, d]   looked up on the runner CPU (no GATHER on MDLA)
    DIR/positional_embedding.npy [n_text_ctx, d]
    DIR/tokenizer.json
    DIR/native_tables.json, native_token_bytes.bin, native_*_embedding.f16
                                 the same tables for a runner in C (docs/native-tables.md; model.json "native_tables")
    DIR/model.json               dims, special tokens, dtype, opset, graphs, cross, sha256 of every file

`cross` in model.json is the form of the cross state (core/model/backend.py): "kv" (the encoder
outputs cross_k, cross_v; the step takes them) or "absorbed" (the encoder outputs F [1,1,1500,d]; the
step takes F). A bundle without the key is "kv".

model.json "graphs" maps a key to {file, format, role, inputs, outputs, …}: `encoder` and
`decoder_step` are the ONNX graphs (as before), `encoder_tflite` and `decoder_step_tflite` the
TFLite ones. A bundle holds the formats it was exported with. `windows` lists the encoder windows its TFLite
graphs serve (core/model/dims.py; absent: 30 s alone): each shorter one's encoder is `encoder_<N>s_tflite`, with
`window_s`, and the step's `cross_mask` hides the positions past a shorter window's (device/graphs/whisper.py).
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

from core.errors import ModelError
from core.model.backend import check_cross
from core.model.dims import FULL_WINDOW_S, WINDOWS_S, ModelDims
from core.model.file_hash import sha256_files
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import WhisperWeights
from device.graphs import tflite_read
from device.graphs.tflite_graphs import build_decoder_step_tflite, build_encoder_tflite
from device.runner.bundle import (
    FORMAT,
    GRAPHS,
    TABLES,
    VERSION,
    read_bundle,
    window_role,
)
from device.spec import native_tables
from device.toolchain.int_quantize import MIXED, Recipe, _aeq, quantize_graph
from device.toolchain.native_tables import write_native_tables

INT_DTYPES = ("a16w8", "a8w8", "mixed")    # device/toolchain/int_quantize.py: TFLite only
DTYPES = ("fp32", "fp16", "int8", *INT_DTYPES)
FORMATS = ("onnx", "tflite")
TFLITE_GRAPHS = {"encoder_tflite": "encoder.tflite", "decoder_step_tflite": "decoder_step.tflite"}
TFLITE_DTYPES = ("fp32", "fp16", *INT_DTYPES)
_ROLES = {"encoder": "encoder", "decoder_step": "decoder_step", "encoder_tflite": "encoder",
          "decoder_step_tflite": "decoder_step"}


def _io(model) -> dict:
    def shapes(values):
        return {v.name: [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim] for v in values}
    return {"inputs": shapes(model.graph.input), "outputs": shapes(model.graph.output)}


def write_manifest(out: Path, dims: ModelDims, dtype: str, special: dict, weights_sha256: str, source: str,
                   graphs: dict, extra: dict | None = None) -> dict:
    files = sorted(p.name for p in out.iterdir() if p.is_file() and p.name != "model.json")
    onnx_step = out / GRAPHS["decoder_step"]
    doc = {"format": FORMAT, "version": VERSION, "dtype": dtype,
           "opset": _opset(onnx_step) if "decoder_step" in graphs else None,
           "dims": asdict(dims), "special_tokens": special, "model_sha256": weights_sha256, "source": source,
           "graphs": graphs, "tables": TABLES, "tokenizer": "tokenizer.json",
           "files": {name: sha256_files([out / name]) for name in files}, **(extra or {})}
    (out / "model.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return doc


def _opset(path: Path) -> int:
    import onnx  # onnx (~0.1 s): only for ONNX graphs; `whisperkv --help` imports this module

    m = onnx.load(str(path), load_external_data=False)
    return max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def special_tokens(weights: WhisperWeights) -> dict:
    tok = WhisperTokenizer.from_weights(weights)
    return asdict(tok.special) | {"languages": tok.languages}


def check_request(dtype: str, formats, windows=(FULL_WINDOW_S,)) -> tuple[str, ...]:
    """The formats to write, in order; a ModelError for a dtype, format or set of windows that cannot be built."""
    formats = tuple(f for f in FORMATS if f in formats)
    shorter = sorted(set(windows) - {FULL_WINDOW_S})
    if set(windows) - set(WINDOWS_S):
        raise ModelError(f"no {', '.join(map(str, sorted(set(windows) - set(WINDOWS_S))))} s encoder window",
                         f"use --windows from: {', '.join(map(str, WINDOWS_S))}")
    if shorter and "tflite" not in formats:
        raise ModelError("shorter encoder windows are TFLite graphs (the board's); ONNX ones are built on the PC",
                         "add --format tflite, or drop --windows")
    if shorter and dtype in INT_DTYPES:
        raise ModelError(f"shorter encoder windows are not built for {dtype} bundles: their step's cross mask is "
                         "not calibrated", "use --dtype fp32 or fp16 with --windows, or drop --windows")
    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}", f"use one of: {', '.join(DTYPES)}")
    if not formats:
        raise ModelError("no graph format asked for", f"use one or more of: {', '.join(FORMATS)}")
    if "tflite" in formats and dtype not in TFLITE_DTYPES:
        raise ModelError(f"TFLite graphs are not built in {dtype}",
                         "use --dtype fp16 (what ncc-tflite --relax-fp32 computes), a16w8, or --format onnx")
    if dtype in INT_DTYPES:
        if "onnx" in formats:
            raise ModelError(f"{dtype} graphs are TFLite only (the MDLA's integer form)", "use --format tflite")
        _aeq()      # the optional extra: say it is missing before anything is built
    return formats


def _write_onnx(p: dict, dims: ModelDims, dtype: str, out: Path, cross: str) -> dict:
    import onnx  # onnx (~0.1 s): only for ONNX graphs; `whisperkv --help` imports this module

    from device.graphs import onnx_graphs as G
    from device.graphs.quantize import quantize_model

    graphs = {}
    for key, build in (("encoder", G.build_encoder), ("decoder_step", G.build_decoder_step)):
        model = build(p, dims, cross=cross)
        entry = {"file": GRAPHS[key], "format": "onnx", "role": _ROLES[key], **_io(model)}
        if dtype != "fp32":
            model = quantize_model(model, dtype)
            entry["io_dtype"] = "float16" if dtype == "fp16" else "float32"
        onnx.save(model, str(out / GRAPHS[key]))
        graphs[key] = entry
        del model
    return graphs


def _write_tflite(weights: WhisperWeights, dtype: str, out: Path, cross: str, log,
                  windows=(FULL_WINDOW_S,)) -> dict:
    p, dims = weights.params, weights.dims
    shorter = sorted(set(windows) - {FULL_WINDOW_S})
    integer = dtype in INT_DTYPES
    samples = None
    if integer:
        # espeak-ng's speech decoded by the tflite backend: only for an integer bundle
        from device.toolchain.calibration import samples as calibration_samples

        samples = calibration_samples(weights, cross, log=log)
        log(f"calibrating on {samples.utterances} synthesized utterances ({samples.seconds_of_speech:.0f} s): "
            f"{len(samples.encoder)} encoder and {len(samples.step)} step inputs")
    graphs = {}
    for key, build in (("encoder_tflite", build_encoder_tflite), ("decoder_step_tflite", build_decoder_step_tflite)):
        role, io_dtype = _ROLES[key], "float32"
        recipe = _int_recipe(dtype, role, cross) if integer else None
        data = build(p, dims, "fp32" if recipe else "fp16" if integer else dtype, cross=cross,
                     **({"cross_mask": True} if role == "decoder_step" and shorter else {}))
        if recipe:
            from device.toolchain.calibration import input_bounds  # as samples above: an integer bundle only

            data = quantize_graph(data, role, Recipe.named(recipe), samples.encoder if role == "encoder" else
                                  samples.step, bounds=input_bounds(weights) if role == "decoder_step" else None)
            io_dtype = "quantized"      # int8/int16 with a scale each: read it from the graph
        (out / TFLITE_GRAPHS[key]).write_bytes(data)
        # Weights fp16 + DEQUANTIZE when dtype is fp16; inputs and outputs are float32 unless quantized.
        graphs[key] = {"file": TFLITE_GRAPHS[key], "format": "tflite", "role": _ROLES[key], "weights": dtype,
                       "io_dtype": io_dtype, **tflite_read.io(data)}
        del data
    for window_s in shorter:     # float bundles only (check_request)
        key, data = window_role(window_s) + "_tflite", build_encoder_tflite(p, dims, dtype, cross, window_s)
        (out / f"{window_role(window_s)}.tflite").write_bytes(data)
        graphs[key] = {"file": f"{window_role(window_s)}.tflite", "format": "tflite", "role": "encoder",
                       "window_s": window_s, "weights": dtype, "io_dtype": "float32", **tflite_read.io(data)}
    return graphs


def _int_recipe(dtype: str, role: str, cross: str) -> str | None:
    """The recipe a graph of an integer bundle is quantized with; None: fp16 weights, not quantized."""
    return MIXED[cross][role] if dtype == "mixed" else dtype


def _remove_stale_graphs(out: Path, graphs: dict) -> None:
    """A graph file from an earlier export of another format would be hashed as if it belonged."""
    windowed = (f"{window_role(w)}.tflite" for w in WINDOWS_S if w != FULL_WINDOW_S)
    for name in (*GRAPHS.values(), *TFLITE_GRAPHS.values(), *windowed):
        if name not in {g["file"] for g in graphs.values()}:
            (out / name).unlink(missing_ok=True)


def export_bundle(weights: WhisperWeights, out: str | Path, dtype: str = "fp32", formats=FORMATS,
                  cross: str = "kv", log=lambda line: None, windows=(FULL_WINDOW_S,)) -> dict:
    """Write the bundle with the graphs of `formats` at `dtype` and cross-state form `cross` (kv or
    absorbed), and return its manifest. ONNX fp16/int8 graphs are quantised from fp32
    (device/graphs/quantize.py); TFLite fp16 keeps fp16 weights behind DEQUANTIZE ops
    (device/graphs/tflite_graphs.py); TFLite a16w8/a8w8/mixed are calibrated and quantized from fp32
    (device/toolchain/int_quantize.py). `windows`: the encoder windows the TFLite graphs serve (float only)."""
    formats = check_request(dtype, formats, windows)
    check_cross(cross)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    p, dims = weights.params, weights.dims
    graphs = {}
    if "onnx" in formats:
        graphs |= _write_onnx(p, dims, dtype, out, cross)
    if "tflite" in formats:
        graphs |= _write_tflite(weights, dtype, out, cross, log, windows)
    _remove_stale_graphs(out, graphs)
    np.save(out / TABLES["token_embedding"], p["decoder.token_embedding.weight"].astype(np.float32))
    np.save(out / TABLES["positional_embedding"], p["decoder.positional_embedding"].astype(np.float32))
    shutil.copyfile(weights.tokenizer_path, out / "tokenizer.json")
    write_native_tables(out, WhisperTokenizer.from_weights(weights), dims, p["decoder.token_embedding.weight"],
                        p["decoder.positional_embedding"])
    extra = {"formats": list(formats), "cross": cross, native_tables.MANIFEST_KEY: native_tables.JSON_FILE} | (
        {"quantized_from": "fp32"} if dtype != "fp32" else {}) | (
        {"windows": sorted({*windows, FULL_WINDOW_S})} if set(windows) != {FULL_WINDOW_S} else {})
    return write_manifest(out, dims, dtype, special_tokens(weights), weights.sha256, weights.source, graphs, extra)


def quantize_bundle(src: str | Path, out: str | Path, dtype: str) -> dict:
    """fp16 or int8 ONNX graphs (device/graphs/quantize.py) from an fp32 bundle: read the fp32 bundle
    at `src`, write the `dtype` bundle to `out` (may be the same directory). Only the ONNX graphs
    are carried over: TFLite graphs come at their dtype from `export_bundle`."""
    import onnx  # onnx (~0.1 s): only for ONNX graphs; `whisperkv --help` imports this module

    from device.graphs.quantize import quantize_model

    b = read_bundle(src)
    if b.dtype != "fp32":
        raise ModelError(f"{src} is already a {b.dtype} bundle", "quantise from an fp32 bundle")
    if "decoder_step" not in b.manifest["graphs"]:
        raise ModelError(f"{src} holds no ONNX graphs to quantise", "export with --format onnx, or "
                         "export the TFLite graphs at the dtype you want with --dtype")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    graphs = {}
    for key, name in GRAPHS.items():
        q = quantize_model(onnx.load(str(b.path / name)), dtype)
        onnx.save(q, str(out / name))
        graphs[key] = b.manifest["graphs"][key] | {"io_dtype": "float16" if dtype == "fp16" else "float32"}
    native = native_tables.FILES if native_tables.MANIFEST_KEY in b.manifest else ()    # older bundles lack them
    if out.resolve() != b.path.resolve():
        for name in (*TABLES.values(), "tokenizer.json", *native):
            shutil.copyfile(b.path / name, out / name)
    _remove_stale_graphs(out, graphs)
    return write_manifest(out, b.dims, dtype, b.manifest["special_tokens"], b.weights_sha256,
                          b.manifest["source"], graphs, {"formats": ["onnx"], "cross": b.cross,
                                                         "quantized_from": "fp32"} |
                          ({native_tables.MANIFEST_KEY: native_tables.JSON_FILE} if native else {}))
