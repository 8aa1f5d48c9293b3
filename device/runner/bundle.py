"""An exported board bundle, as the runner reads it (device/toolchain/export.py writes it).

    DIR/encoder.onnx, encoder.tflite             mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d]
                                                 (model.json "cross": "absorbed": F [1,1,1500,d])
    DIR/decoder_step.onnx, decoder_step.tflite   the step signature in docs/protocol.md
    DIR/encoder_10s.tflite, encoder_20s.tflite   shorter windows' encoders (model.json "windows"; the step then
                                                 takes `cross_mask`), and their .dla after compile
    DIR/encoder.dla, decoder_step.dla            after `whisperkv compile` (MDLA 5.3)
    DIR/token_embedding.npy      [n_vocab, d]   looked up on the runner CPU (no GATHER on MDLA)
    DIR/positional_embedding.npy [n_text_ctx, d]
    DIR/tokenizer.json
    DIR/model.json               dims, special tokens, dtype, opset, cross, sha256 of every file
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import ModelError
from core.model.backend import CROSS_FORMS, check_cross
from core.model.dims import FULL_WINDOW_S, ModelDims
from core.model.file_hash import sha256_files
from core.model.weights import WhisperWeights
from device.graphs.tflite_read import params_from_tflite
from device.spec.neuron_fixes import EXPORT_FIX
from device.spec.slot_contract import BUNDLE_FORMAT, WINDOW_GRAPH

FORMAT = BUNDLE_FORMAT
VERSION = 1
GRAPHS = {"encoder": "encoder.onnx", "decoder_step": "decoder_step.onnx"}
TABLES = {"token_embedding": "token_embedding.npy", "positional_embedding": "positional_embedding.npy"}


@dataclass
class Bundle:
    path: Path
    manifest: dict
    dims: ModelDims
    dtype: str
    weights_sha256: str     # of the weights it was exported from (model.json's model_sha256), not of its files
    source: str

    @property
    def cross(self) -> str:
        """The form of the cross state its graphs pass (core/model/backend.py); older bundles are kv."""
        return self.manifest.get("cross", "kv")

    @property
    def windows(self) -> tuple[int, ...]:
        """The encoder windows its TFLite (and compiled) graphs serve, shortest first; older bundles: 30 s."""
        return tuple(sorted(self.manifest.get("windows", [FULL_WINDOW_S])))

    def has(self, role: str, fmt: str = "onnx") -> bool:
        if fmt == "dla":       # compiled by `whisperkv compile`: listed in its own section
            return role in (self.manifest.get("dla") or {}).get("graphs", {})
        return _graph_key(role, fmt) in self.manifest["graphs"]

    def graph_path(self, role: str, fmt: str = "onnx") -> Path:
        """`role`: encoder or decoder_step; `fmt`: onnx or tflite. A ModelError names the missing format."""
        entry = self.manifest["graphs"].get(_graph_key(role, fmt))
        if entry is None:
            raise ModelError(f"the bundle at {self.path} has no {fmt} {role} graph",
                             f"export one with `whisperkv export --format {fmt} --out DIR`")
        return self.path / entry["file"]

    @property
    def encoder_path(self) -> Path:
        return self.graph_path("encoder")

    @property
    def decoder_step_path(self) -> Path:
        return self.graph_path("decoder_step")

    @property
    def tokenizer_path(self) -> Path:
        return self.path / self.manifest.get("tokenizer", "tokenizer.json")

    @property
    def token_embedding(self) -> np.ndarray:
        return np.load(self.path / TABLES["token_embedding"])

    @property
    def positional_embedding(self) -> np.ndarray:
        return np.load(self.path / TABLES["positional_embedding"])


def window_role(window_s: int) -> str:
    """The encoder graph of a window: `encoder` for 30 s, `encoder_10s` for 10 s (its .tflite and .dla alike)."""
    return "encoder" if window_s == FULL_WINDOW_S else WINDOW_GRAPH % window_s


def _graph_key(role: str, fmt: str) -> str:
    return role if fmt == "onnx" else f"{role}_{fmt}"


def is_bundle(path) -> bool:
    return path is not None and (Path(path) / "model.json").is_file()


def read_bundle(path: str | Path, verify: bool = False) -> Bundle:
    """Open an exported bundle; `verify` re-hashes every file against model.json."""
    path = Path(path)
    try:
        doc = json.loads((path / "model.json").read_text())
    except FileNotFoundError:
        raise ModelError(f"{path} is not a model bundle (no model.json)", EXPORT_FIX) from None
    except ValueError as exc:
        raise ModelError(f"{path}/model.json is not valid JSON ({exc})", EXPORT_FIX) from exc
    if doc.get("format") != FORMAT:
        raise ModelError(f"{path}/model.json is not a {FORMAT} manifest", EXPORT_FIX)
    if doc.get("cross", "kv") not in CROSS_FORMS:
        raise ModelError(f"{path}/model.json names an unknown cross-attention form {doc['cross']!r}",
                         f"{EXPORT_FIX} (--cross {' or '.join(CROSS_FORMS)}), or update this runner")
    for name, digest in doc.get("files", {}).items():
        f = path / name
        if not f.is_file():
            raise ModelError(f"the bundle at {path} is missing {name}", EXPORT_FIX)
        if verify and sha256_files([f]) != digest:
            raise ModelError(f"{path}/{name} does not match its sha256 in model.json (corrupt or edited)",
                             EXPORT_FIX)
    return Bundle(path=path, manifest=doc, dims=ModelDims(**doc["dims"]), dtype=doc["dtype"],
                  weights_sha256=doc["model_sha256"], source=f"bundle:{path}")


def weights_from_bundle(path: str | Path) -> WhisperWeights:
    """The canonical fp32 params read back out of a bundle's graphs (ONNX, else TFLite), for the NumPy backend."""
    b = read_bundle(path)
    p: dict[str, np.ndarray] = {}
    if b.has("encoder", "onnx"):     # the reader of the one format the bundle has, not both
        import onnx  # ~0.1 s, and absent from a LiteRT board: only for a bundle of ONNX graphs

        from device.graphs.onnx_graphs import params_from_graph  # onnx too: only for a bundle of ONNX graphs

        for role in ("encoder", "decoder_step"):
            p |= params_from_graph(onnx.load(str(b.graph_path(role))))
    else:
        for role in ("encoder", "decoder_step"):
            p |= params_from_tflite(b.graph_path(role, "tflite").read_bytes())
    for conv in ("encoder.conv1.weight", "encoder.conv2.weight"):
        p[conv] = np.ascontiguousarray(p[conv][:, :, 0])      # [out, in, 1, 3] -> [out, in, 3]
    d, L = b.dims.n_text_state, b.dims.n_text_layer
    for kind in ("key", "value") if b.cross == "kv" else ():   # absorbed: per-layer constants already
        w = p.pop(f"cross_attn.{kind}.all.weight")           # [L*d, d]
        bias = p.pop(f"cross_attn.{kind}.all.bias", None)
        for i in range(L):
            p[f"decoder.blocks.{i}.cross_attn.{kind}.weight"] = np.ascontiguousarray(w[i * d:(i + 1) * d])
            if bias is not None:
                p[f"decoder.blocks.{i}.cross_attn.{kind}.bias"] = bias[i * d:(i + 1) * d]
    p["decoder.token_embedding.weight"] = b.token_embedding
    p["decoder.positional_embedding"] = b.positional_embedding
    return WhisperWeights(dims=b.dims, params=p, tokenizer_path=b.tokenizer_path, sha256=b.weights_sha256,
                          source=b.source, files=[b.path / name for name in b.manifest["files"]])


def cross_for(source: WhisperWeights | str | Path, cross: str | None) -> str:
    """The cross-state form to build (core/model/backend.py): a bundle's own (a different one asked for is an
    error), else `cross` or kv."""
    if isinstance(source, WhisperWeights):
        return check_cross(cross or "kv")
    own = read_bundle(source).cross
    if cross not in (None, own):
        raise ModelError(f"the bundle at {source} has {own} cross-attention graphs, not {cross}",
                         f"export one with `whisperkv export --cross {cross} --out DIR`, or drop the request")
    return own
