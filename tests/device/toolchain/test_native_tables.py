"""The native tables (device/toolchain/native_tables.py, docs/native-tables.md): written from the installed tokenizer
and weights, read back as a native runner reads them, they hold what the Python runner computes: each token's
bytes, the special ids, the language tokens, the suppressed sets of the logit rules and the fp16 embeddings."""
from __future__ import annotations

import copy
import json
import shutil
import subprocess
from dataclasses import asdict, fields

import numpy as np
import pytest

from core.decode import timestamps
from core.decode.logit_rules import LogitRules
from core.decode.options import DecodeOptions
from core.errors import ModelError
from core.model.tokenizer import SpecialTokens, WhisperTokenizer
from core.model.weights import load_model
from device.runner.bundle import read_bundle
from device.spec import native_form
from device.spec import native_tables as spec
from device.toolchain import export
from device.toolchain import native_tables as nt

ENGLISH = " And so, my fellow Americans: ask not what your country can do for you."
CHINESE = "我们今天去公园散步，天气很好。"


@pytest.fixture(scope="module")
def weights():
    return load_model()


@pytest.fixture(scope="module")
def tokenizer(weights):
    return WhisperTokenizer.from_weights(weights)


@pytest.fixture(scope="module")
def folder(weights, tokenizer, tmp_path_factory):
    out = tmp_path_factory.mktemp("native")
    p = weights.params
    nt.write_native_tables(out, tokenizer, weights.dims, p["decoder.token_embedding.weight"],
                           p["decoder.positional_embedding"])
    return out


@pytest.fixture(scope="module")
def tables(folder):
    return nt.read_native_tables(folder)


def differing_tokens(pieces: list[bytes], tokenizer: WhisperTokenizer) -> list[int]:
    return [i for i, piece in enumerate(pieces) if piece != tokenizer.token_bytes(i)]


def test_every_token_s_bytes_are_the_tokenizer_s(tables, tokenizer, weights):
    assert len(tables.pieces) == weights.dims.n_vocab
    assert differing_tokens(tables.pieces, tokenizer) == []
    assert tables.pieces[tokenizer.encode(" fellow")[0]] == b" fellow"
    assert all(p == b"" for p in tables.pieces[tokenizer.special.eot:])      # special and timestamp tokens


@pytest.mark.parametrize("text", [ENGLISH, CHINESE])
def test_a_sentence_decodes_from_the_tables_to_the_tokenizer_s_text(tables, tokenizer, text):
    tokens = tokenizer.encode(text)
    assert tables.decode(tokens) == tokenizer.decode(tokens) == text


def test_the_chinese_sentence_splits_a_character_across_tokens(tables, tokenizer):
    """So the decode above covers a character whose bytes two tokens carry."""
    def whole(piece: bytes) -> bool:
        try:
            piece.decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False
    assert not all(whole(tables.pieces[t]) for t in tokenizer.encode(CHINESE))


def test_a_changed_byte_is_caught_by_the_comparison(folder, tokenizer):
    data = bytearray((folder / spec.TOKEN_BYTES_FILE).read_bytes())
    n, token = nt.HEADER.unpack_from(data)[2], tokenizer.encode(" fellow")[0]
    offset = int(np.frombuffer(data, "<u4", 1, nt.HEADER.size + 4 * token)[0])
    data[nt.HEADER.size + 4 * (n + 1) + offset] ^= 0x20       # the bytes follow the header and n + 1 offsets
    assert differing_tokens(nt.unpack_token_bytes(bytes(data), n), tokenizer) == [token]


@pytest.mark.parametrize("damage, says", [
    (lambda d: d[:10], "shorter than its 16-byte header"),
    (lambda d: b"XXXX" + d[4:], "not 'WKVB'"),
    (lambda d: d[:4] + (spec.VERSION + 1).to_bytes(4, "little") + d[8:], f"this runner reads {spec.VERSION}"),
    (lambda d: d[:-1], "where its header says"),
    (lambda d: d[:20] + (2 ** 31).to_bytes(4, "little") + d[24:], "do not run from 0 to its byte count in order"),
])
def test_a_damaged_token_bytes_file_is_refused(folder, damage, says):
    data = (folder / spec.TOKEN_BYTES_FILE).read_bytes()
    with pytest.raises(ModelError, match=says):
        nt.unpack_token_bytes(damage(data))


def test_a_token_count_other_than_the_model_s_is_refused(folder):
    with pytest.raises(ModelError, match="holds 51865 tokens, the model 51866"):
        nt.unpack_token_bytes((folder / spec.TOKEN_BYTES_FILE).read_bytes(), 51866)


def test_the_special_ids_and_languages_are_the_tokenizer_s(tables, tokenizer):
    assert spec.SPECIAL_FIELDS == tuple(f.name for f in fields(SpecialTokens))
    assert tables.doc["special"] == asdict(tokenizer.special)
    assert [(lang["code"], lang["id"]) for lang in tables.doc["languages"]] == list(tokenizer.languages.items())


@pytest.mark.parametrize("timestamp_tokens", [False, True])
@pytest.mark.parametrize("suppress_eot", [False, True])
def test_the_suppressed_sets_are_the_logit_rules(tables, tokenizer, weights, timestamp_tokens, suppress_eot):
    rules = LogitRules(tokenizer, DecodeOptions(timestamps=timestamp_tokens, suppress_eot=suppress_eot),
                       weights.dims.n_vocab)
    assert nt.suppressed_ids(tables.doc, timestamp_tokens, suppress_eot) == rules.suppressed.tolist()
    assert tables.doc["suppress"]["blank"] == rules.blank
    drifted = copy.deepcopy(tables.doc)
    drifted["suppress"]["non_speech"].pop()
    assert nt.suppressed_ids(drifted, timestamp_tokens, suppress_eot) != rules.suppressed.tolist()


def test_the_timestamp_constants_are_the_decoder_s(tables):
    assert tables.doc["timestamps"]["precision"] == timestamps.TIME_PRECISION
    assert tables.doc["timestamps"]["max_initial"] * timestamps.TIME_PRECISION == pytest.approx(
        timestamps.MAX_INITIAL_TIMESTAMP)


def test_the_embeddings_are_the_weights_in_fp16_and_exact(tables, weights):
    for table, name in ((tables.token_embedding, "decoder.token_embedding.weight"),
                        (tables.positional_embedding, "decoder.positional_embedding")):
        assert table.dtype == np.dtype("<f2")
        assert np.array_equal(table, weights.params[name].astype(np.float16))
        # whisper-base's weights are fp16 at the source: the runner's fp32 sum is the Python runner's
        assert np.array_equal(table.astype(np.float32), weights.params[name])
    assert all(tables.doc["files"][k]["exact"] for k in ("token_embedding", "positional_embedding"))


def test_a_truncated_embedding_is_refused(folder, tmp_path):
    for name in spec.FILES:
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    with open(tmp_path / spec.POSITIONAL_EMBEDDING_FILE, "r+b") as f:
        f.truncate(100)
    with pytest.raises(ModelError, match=r"native_positional_embedding.f16 is 100 bytes, 458752 bytes for \[448, 512\]"):
        nt.read_native_tables(tmp_path)


def test_tables_of_another_version_are_refused(folder, tmp_path):
    doc = json.loads((folder / spec.JSON_FILE).read_text()) | {"version": spec.VERSION + 1}
    (tmp_path / spec.JSON_FILE).write_text(json.dumps(doc))
    with pytest.raises(ModelError, match=f"is not {spec.FORMAT} version {spec.VERSION}"):
        nt.read_native_tables(tmp_path)


def test_the_json_holds_the_spec_s_fields(tables):
    doc = tables.doc
    assert tuple(doc) == spec.JSON_FIELDS and tuple(doc["dims"]) == spec.DIMS_FIELDS
    assert tuple(doc["suppress"]) == spec.SUPPRESS_FIELDS and tuple(doc["timestamps"]) == spec.TIMESTAMP_FIELDS
    assert nt.HEADER.size == spec.TOKEN_BYTES_HEADER


def test_export_writes_the_tables_and_model_json_lists_them(weights, tokenizer, monkeypatch, tmp_path):
    """The graphs are not the subject: export runs without them, writing the tables and the manifest."""
    monkeypatch.setattr(export, "_write_onnx", lambda *a, **k: {})
    doc = export.export_bundle(weights, tmp_path, formats=("onnx",))
    assert doc[spec.MANIFEST_KEY] == spec.JSON_FILE and set(spec.FILES) <= set(doc["files"])
    read_bundle(tmp_path, verify=True)
    assert nt.read_native_tables(tmp_path).doc["special"] == asdict(tokenizer.special)


C_READER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "whisperkv_spec.h"
/* argv: the token bytes file, the token embedding file, a token id; prints its bytes in hex and its first fp16 */
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    unsigned char head[WKV_TABLES_TOKEN_BYTES_HEADER];
    uint32_t version, n, size, from, to;
    if (argc != 4 || !f || fread(head, 1, sizeof head, f) != sizeof head) return 2;
    if (memcmp(head, WKV_TABLES_TOKEN_BYTES_MAGIC, 4) != 0) return 3;
    memcpy(&version, head + 4, 4); memcpy(&n, head + 8, 4); memcpy(&size, head + 12, 4);
    if (version != WKV_TABLES_VERSION) return 4;
    uint32_t id = (uint32_t)atoi(argv[3]);
    fseek(f, (long)(WKV_TABLES_TOKEN_BYTES_HEADER + 4 * id), SEEK_SET);
    if (fread(&from, 4, 1, f) != 1 || fread(&to, 4, 1, f) != 1) return 5;
    fseek(f, (long)(WKV_TABLES_TOKEN_BYTES_HEADER + 4 * (n + 1) + from), SEEK_SET);
    printf("%u %u ", n, size);
    for (uint32_t i = from; i < to; i++) printf("%02x", fgetc(f));
    uint16_t half;
    FILE *e = fopen(argv[2], "rb");
    fseek(e, (long)(2 * id * 512), SEEK_SET);
    if (fread(&half, 2, 1, e) != 1) return 6;
    printf(" %04x\n", half);
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler `cc` on PATH to build a reader with the header")
def test_a_c_program_reads_a_token_s_bytes_and_embedding_with_the_header(folder, tables, tokenizer, tmp_path):
    source, exe = tmp_path / "read_tables.c", tmp_path / "read_tables"
    source.write_text(C_READER)
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", str(native_form.HERE), str(source), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    token = tokenizer.encode(CHINESE)[4]        # half a character: the C side never decodes, only copies
    printed = subprocess.run([str(exe), str(folder / spec.TOKEN_BYTES_FILE), str(folder / spec.TOKEN_EMBEDDING_FILE),
                              str(token)], check=True, capture_output=True, text=True).stdout.split()
    assert printed == [str(len(tables.pieces)), str(len(b"".join(tables.pieces))), tokenizer.token_bytes(token).hex(),
                       f"{int(tables.token_embedding[token, 0].view(np.uint16)):04x}"]
