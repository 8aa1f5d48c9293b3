"""The native runner's decoding pieces (device/native_runner/tables.c, rules.c, text.c) through their driver
`decode-check`, against core/decode's Python: the tables (the exporter's files, test_native_tables' fixtures), the
picks on real logits (test_en.wav decoded with timestamps on ONNX Runtime) and random ones, the text token by token
and whole, the segments, the compression ratio, and damaged tables refused."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from core.decode import decoding
from core.decode.logit_rules import LogitRules, detect_language
from core.decode.options import DecodeOptions
from core.decode.quality import compression_ratio
from core.decode.timestamps import kept_length, split_segments
from core.errors import ModelError
from core.model.tokenizer import Utf8Assembler
from device.spec import native_tables as spec
from device.toolchain import native_tables as nt
from device.toolchain.native_runner_build import build
from tests.device.toolchain.test_native_tables import CHINESE, ENGLISH, folder, tokenizer, weights  # noqa: F401

OPTIONS = [(ts, eot, k) for ts in (False, True) for eot in (False, True) for k in (1, 5, 100)]


@pytest.fixture(scope="module")     # folder, tokenizer and weights above are test_native_tables' module fixtures
def check() -> Path:
    return build("x86_64", program="decode-check")


def ask(check: Path, bundle: Path, commands: list[str]) -> list[str]:
    """decode-check's answer lines, one a command; or, with no command, the one line of its refusal."""
    done = subprocess.run([str(check), str(bundle)], input="".join(c + "\n" for c in commands), capture_output=True,
                          text=True, timeout=120)
    if not commands:
        assert done.returncode == 1 and done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
        return done.stderr.splitlines()
    assert done.returncode == 0 and len(done.stdout.split("\n")) == len(commands) + 1, done.stderr
    return done.stdout.split("\n")[:-1]


def unhex(word: str) -> bytes:
    return b"" if word == "-" else bytes.fromhex(word)


def line(*words) -> str:
    return " ".join(map(str, words))


@pytest.fixture(scope="module")
def real_steps(onnx_model, clip_mels, tmp_path_factory) -> dict:
    """The SOT step's logits (row 0 of the file), then each sampled step's with the tokens sampled before it."""
    steps, sot, pick, detect = [], [], LogitRules.pick, decoding.detect_language
    with mock.patch.object(LogitRules, "pick", lambda self, x, sampled: steps.append(
            (np.array(x, np.float32), list(sampled))) or pick(self, x, sampled)), \
            mock.patch.object(decoding, "detect_language", lambda tok, x: sot.append(x.copy()) or detect(tok, x)):
        list(decoding.decode_window(onnx_model.backend, onnx_model.tokenizer, clip_mels("test_en.wav")[0],
                                    DecodeOptions(timestamps=True)))
    path = tmp_path_factory.mktemp("logits") / "steps.f32"
    np.stack(sot + [logits for logits, _ in steps]).tofile(path)
    return {"path": path, "sot": sot[0], "steps": steps}


def random_logits(tok) -> list[tuple[np.ndarray, list[int]]]:
    """Noise: of several scales, timestamps boosted until their sum decides, values tied or spiked, each after two
    histories (none, text, open and closed timestamps, time going on); then a best text logit one float32 step
    above, then below, the timestamps' log-sum-exp."""
    rng, tb, text, rows = np.random.default_rng(53), tok.special.timestamp_begin, tok.encode(ENGLISH), []
    histories = [[], text[:1], [tb], [tb, text[0]], [tb, text[0], text[1], tb + 40], [tb, text[0], tb + 40, tb + 40],
                 [tb + 3, *text[:4], tb + 60, tb + 60, text[5]], text[:6]]
    for i in range(12):
        x = (rng.standard_normal(51865) * (1 + i % 4)).astype(np.float32)
        x[tb:] += np.float32(4 + i % 5 if i % 3 == 1 else 0)
        x = np.round(x) if i % 4 == 2 else x
        if i % 6 == 5:
            x[rng.integers(0, 51865, 3)] = [30.0, 30.0, 25.0]
        rows += [(x, sampled) for sampled in histories[i % 8::4]]
    for direction in (np.inf, -np.inf):
        x = (rng.standard_normal(51865) * 0.5).astype(np.float32)
        x[tb:] += 3
        lse = x[tb:].max() + np.log(np.exp(x[tb:] - x[tb:].max(), dtype=np.float64).sum())
        x[text[0]] = np.nextafter(np.float32(lse), np.float32(direction))
        rows.append((x, text[:6]))
    return rows


def entropy(x: np.ndarray) -> float:
    """In float64. LogitRules.pick's is within ~1e-4 of it: its float32 dot of e and the logits nearly cancels."""
    x = x[np.isfinite(x)].astype(np.float64) - x.max()
    return float(np.log(np.exp(x).sum()) - (np.exp(x) * x).sum() / np.exp(x).sum())


def lower_index_top(x: np.ndarray, python_top: np.ndarray) -> list[int]:
    """The top ids, every tie to the lower id: LogitRules.pick's own for k <= 8 (argmax passes). For a larger k its
    argpartition keeps no order among equal values: there the values alone must be the Python's."""
    last = x[python_top[-1]]
    above = np.flatnonzero(x > last)
    ids = np.concatenate([above, np.flatnonzero(x == last)[:len(python_top) - len(above)]])
    return ids[np.lexsort((ids, -x[ids]))].tolist()


def compare_picks(check, bundle, tok, path, rows: list[tuple[np.ndarray, list[int]]]) -> int:
    """Every option combination on every row (its logits and the tokens sampled before): the C pick is
    LogitRules.pick's. How many rows' greedy token the options changed, so that a test knows they mattered."""
    cases = [(o, row, x, sampled) for row, (x, sampled) in enumerate(rows) for o in OPTIONS]
    answers = ask(check, bundle, [line("pick", *map(int, o), path, row, *sampled) for o, row, _, sampled in cases])
    rules = {o: LogitRules(tok, DecodeOptions(timestamps=o[0], suppress_eot=o[1], top_k=o[2]), 51865) for o in OPTIONS}
    greedy: dict[int, set] = {}
    for (o, row, logits, sampled), answer in zip(cases, answers):
        x = rules[o].apply(logits, sampled).copy()
        python, where = rules[o].pick(logits.copy(), sampled), f"row {row}, options {o}, sampled {sampled}"
        head, logprobs, tail = answer.split("|")
        ids = [int(w) for w in head.split()]
        assert ids[0] == len(ids) - 1 and ids[1:] == lower_index_top(x, python.top), where
        assert ids[1:] == python.top.tolist() or (o[2] > 8 and x[ids[1:]].tolist() == x[python.top].tolist()), where
        np.testing.assert_allclose([float(w) for w in logprobs.split()], python.logprobs, rtol=1e-5, atol=1e-5)
        eot, h, norm = (float(w) for w in tail.split())
        assert eot == pytest.approx(python.eot_logprob, rel=1e-5, abs=1e-5) and norm == pytest.approx(python.norm)
        assert h == pytest.approx(entropy(x), rel=1e-5, abs=1e-6) and h == pytest.approx(python.entropy, abs=1e-3)
        greedy.setdefault(row, set()).add(int(python.top[0]))
    return sum(len(tokens) > 1 for tokens in greedy.values())


def test_the_greedy_picks_equal_the_python_rules_on_real_logits(check, folder, tokenizer, real_steps):  # noqa: F811
    rows = [(real_steps["sot"], []), *real_steps["steps"]]     # as the file holds them
    assert any(t >= tokenizer.special.timestamp_begin for _, sampled in rows for t in sampled)
    assert compare_picks(check, folder, tokenizer, real_steps["path"], rows) > 0


def test_the_picks_equal_the_python_rules_on_random_logits(check, folder, tokenizer, tmp_path):  # noqa: F811
    rows = random_logits(tokenizer)
    np.stack([x for x, _ in rows]).tofile(tmp_path / "random.f32")
    assert compare_picks(check, folder, tokenizer, tmp_path / "random.f32", rows) > 0
    edge = LogitRules(tokenizer, DecodeOptions(timestamps=True), 51865)
    above, below = (edge.pick(x, sampled).top[0] for x, sampled in rows[-2:])
    assert above < tokenizer.special.timestamp_begin <= below    # the timestamps' sum decided both ways


def test_a_drawn_token_is_the_python_one_at_the_same_uniform(check, folder, tokenizer, real_steps):  # noqa: F811
    cases = [(row, t, u) for row in (1, 5, 12, 20) for t in (0.2, 0.6, 1.0) for u in (0.0, 0.31, 0.77, 0.999)]
    answers = ask(check, folder, [line("sample", 1, 0, 5, real_steps["path"], row, t, u,
                                       *real_steps["steps"][row - 1][1]) for row, t, u in cases] +
                  ["rng 7 2000", "rng 7 2000", "rng 8 2000"])
    rules, drawn = LogitRules(tokenizer, DecodeOptions(timestamps=True), 51865), set()
    for (row, t, u), answer in zip(cases, answers):
        logits, sampled = real_steps["steps"][row - 1]
        token, logprob = rules.sample(rules.pick(logits, sampled), t, mock.Mock(random=lambda: u))   # draws u
        assert int(answer.split()[0]) == token and float(answer.split()[1]) == pytest.approx(logprob, abs=1e-5)
        drawn.add(token)
    assert len(drawn) > 4
    first, again, other = answers[len(cases):]         # the runner's own generator: seeded, uniform in [0, 1)
    draws = np.array([float(w) for w in first.split()])
    assert first == again != other and 0 <= draws.min() and draws.max() < 1 and abs(draws.mean() - 0.5) < 0.03


def test_the_language_is_the_python_detection(check, folder, tokenizer, real_steps):  # noqa: F811
    answer = ask(check, folder, [f"detect {real_steps['path']} 0"])[0].split()
    (code, probs), codes = detect_language(tokenizer, real_steps["sot"]), list(tokenizer.languages)
    assert [codes[int(i)] for i in answer[::2]] == list(probs) and codes[int(answer[0])] == code == "en"
    np.testing.assert_allclose([float(p) for p in answer[1::2]], list(probs.values()), rtol=1e-5, atol=1e-7)


def tables_with(tables: Path, out: Path, name: str = "", data: bytes | None = None) -> Path:
    """The tables with the file `name` replaced by `data` (None: removed); the others linked, not copied (53 MB)."""
    for f in spec.FILES:
        if f != name:
            os.symlink(tables / f, out / f)
        elif data is not None:
            (out / f).write_bytes(data)
    return out


def test_the_tables_read_are_the_tokenizer_s(check, folder, tokenizer, weights, tmp_path):  # noqa: F811
    token, position, sp = tokenizer.encode(CHINESE)[4], 7, tokenizer.special
    info, pieces, embed, en, zh, xx = ask(check, folder, ["info", "bytes", f"embed {token} {position}", "lang en",
                                                          "lang zh", "lang xx"])
    suppressed = len(nt.suppressed_ids(nt.read_native_tables(folder).doc, False))
    assert info == line(51865, sp.eot, sp.timestamp_begin, len(tokenizer.languages), suppressed, 0.02, 50)
    assert [unhex(w) for w in pieces.split(" ")] == [tokenizer.token_bytes(i) for i in range(51865)]
    rows = [weights.params[name][i].astype("<f2").view("<u2") for name, i in (
        ("decoder.token_embedding.weight", token), ("decoder.positional_embedding", position))]
    assert embed.split() == ["".join(f"{v:04x}" for v in row) for row in rows]
    assert (int(en), int(zh), int(xx)) == (tokenizer.languages["en"], tokenizer.languages["zh"], -1)
    data = bytearray((folder / spec.TOKEN_BYTES_FILE).read_bytes())     # a changed byte is found
    fellow = tokenizer.encode(" fellow")[0]
    data[nt.HEADER.size + 4 * 51866 + int(np.frombuffer(data, "<u4", 1, nt.HEADER.size + 4 * fellow)[0])] ^= 0x20
    changed = ask(check, tables_with(folder, tmp_path, spec.TOKEN_BYTES_FILE, bytes(data)), ["bytes"])[0].split(" ")
    assert [i for i, w in enumerate(changed) if unhex(w) != tokenizer.token_bytes(i)] == [fellow]


def random_byte_strings(rng: np.random.Generator, n: int = 400) -> list[bytes]:
    """ASCII, whole characters of 2 to 4 bytes, and bytes UTF-8 never has (lone continuations, C0/C1/F5-FF,
    overlong and surrogate forms, past U+10FFFF, characters cut short), in random orders."""
    bad = [b"\x80", b"\xbf", b"\xc0", b"\xc1\x81", b"\xf5", b"\xff", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf0\x80",
           b"\xf4\x90\x80\x80", b"\xe0\xa0", b"\xf0\x9f\x98", b"\xed\xbf"]
    kinds = [lambda: bytes(rng.integers(0x20, 0x7f, 3).tolist()), lambda: bad[int(rng.integers(len(bad)))],
             lambda: bytes(rng.integers(0, 256, int(rng.integers(1, 4))).tolist()),
             lambda: chr(int(rng.choice([rng.integers(0x80, 0x800), rng.integers(0x4e00, 0x9fff),
                                         rng.integers(0x10000, 0x10ffff)]))).encode()]
    return [b"".join(kinds[int(rng.integers(4))]() for _ in range(int(rng.integers(0, 12)))) for _ in range(n)]


def python_pushes(pieces: list[bytes]) -> list[str]:
    assembler = Utf8Assembler()
    return [assembler.push(p) for p in pieces] + [assembler.flush()]


def test_text_decodes_as_python_whole_and_piece_by_piece(check, folder):  # noqa: F811
    rng = np.random.default_rng(3)
    strings = random_byte_strings(rng)
    cuts = [sorted(rng.integers(0, len(s) + 1, int(rng.integers(0, 5))).tolist()) for s in strings]
    splits = [[s[a:b] for a, b in zip([0, *c], [*c, len(s)])] for s, c in zip(strings, cuts)]
    answers = ask(check, folder, [f"decode {s.hex() or '-'}" for s in strings] +
                  [line("push", *(p.hex() or "-" for p in split)) for split in splits])
    for s, answer in zip(strings, answers):
        assert unhex(answer).decode() == s.decode("utf-8", errors="replace"), s
    for split, answer in zip(splits, answers[len(strings):]):
        assert [unhex(w).decode() for w in answer.split(" ")] == python_pushes(split), split


@pytest.mark.parametrize("sentence", [ENGLISH, CHINESE])
def test_a_sentence_s_tokens_give_the_tokenizer_s_text(check, folder, tokenizer, sentence):  # noqa: F811
    tokens = tokenizer.encode(sentence)
    pieces = [tokenizer.token_bytes(t) for t in tokens]
    live, whole = ask(check, folder, [line("push", *(p.hex() or "-" for p in pieces)),
                                      line("text", tokenizer.special.sot, *tokens)])
    assert [unhex(w).decode() for w in live.split(" ")] == python_pushes(pieces)
    assert unhex(whole).decode() == tokenizer.decode(tokens) == sentence
    assert ("" in python_pushes(pieces)[:-1]) == (sentence == CHINESE)    # a character split across tokens


def random_window(tb: int, eot: int, text: list[int], rng: np.random.Generator) -> list[int]:
    """Text, single and paired timestamps in rising time, EOT at the end or not."""
    tokens, t = [], int(rng.integers(0, 30))
    for _ in range(int(rng.integers(1, 14))):
        t += int(rng.integers(0, 200))
        tokens += [tb + min(t, 1500)] * int(rng.integers(1, 3)) if rng.random() < 0.35 else \
            rng.choice(text, int(rng.integers(1, 4))).tolist()
    return tokens + ([eot] if rng.random() < 0.3 else [])


def test_segments_seek_and_kept_length_are_split_segments(check, folder, tokenizer):  # noqa: F811
    tb, text, rng = tokenizer.special.timestamp_begin, tokenizer.encode(ENGLISH + CHINESE), np.random.default_rng(11)
    windows = [[], [tb], [tb, tb], text[:5], [tb, *text[:3], tb + 100], [*text[:2], tb + 1, tb + 1, *text[2:4]]] + \
        [random_window(tb, tokenizer.special.eot, text, rng) for _ in range(150)]
    cases = [(tokens, *[(3000, 0.0), (1400, 30.0), (250, 12.34)][i % 3]) for i, tokens in enumerate(windows)]
    answers = ask(check, folder, [line("segments", offset, frames, *tokens) for tokens, frames, offset in cases])
    for (tokens, frames, offset), answer in zip(cases, answers):
        words = answer.split(" ")
        segments, seek = split_segments(tokens, tokenizer, offset, frames)
        assert [int(words[0]), int(words[1])] == [seek, kept_length(tokens, tokenizer)], tokens
        got = [(float(a), float(b), unhex(h).decode()) for a, b, h in zip(*[iter(words[2:])] * 3)]
        assert got == [(s.start, s.end, s.text) for s in segments], tokens
    assert sum(len(split_segments(t, tokenizer, 0.0, 3000)[0]) > 1 for t in windows) > 10


def test_the_compression_ratio_is_python_s(check, folder):  # noqa: F811
    texts = ["", ENGLISH, ENGLISH * 7, CHINESE * 3, "ha" * 200, bytes(range(256)).decode("latin-1")]
    answers = ask(check, folder, [f"ratio {t.encode().hex() or '-'}" for t in texts])
    assert [float(a) for a in answers] == [compression_ratio(t) for t in texts]


def edited_json(data: bytes, **changes) -> bytes:     # None drops the field
    return json.dumps({k: v for k, v in (json.loads(data) | changes).items() if v is not None}).encode()


DAMAGES = {     # the file damaged, and how
    "version": (spec.JSON_FILE, lambda d: edited_json(d, version=spec.VERSION + 1)),
    "format": (spec.JSON_FILE, lambda d: edited_json(d, format="other")),
    "fields": (spec.JSON_FILE, lambda d: edited_json(d, suppress=None, timestamps=None)),
    "header": (spec.TOKEN_BYTES_FILE, lambda d: d[:10]), "short": (spec.TOKEN_BYTES_FILE, lambda d: d[:-1]),
    "magic": (spec.TOKEN_BYTES_FILE, lambda d: b"X\\'\x01" + d[4:]),
    "bytes version": (spec.TOKEN_BYTES_FILE, lambda d: d[:4] + (spec.VERSION + 1).to_bytes(4, "little") + d[8:]),
    "count": (spec.TOKEN_BYTES_FILE, lambda d: d[:8] + (51866).to_bytes(4, "little") + d[12:]),
    "order": (spec.TOKEN_BYTES_FILE, lambda d: d[:20] + (2 ** 31).to_bytes(4, "little") + d[24:]),
    "embedding": (spec.POSITIONAL_EMBEDDING_FILE, lambda d: d[:100]), "no embedding": (spec.TOKEN_EMBEDDING_FILE, None),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_tables_are_refused_in_the_python_reader_s_line(check, folder, tmp_path, damage):  # noqa: F811
    name, change = DAMAGES[damage]
    bundle = tables_with(folder, tmp_path, name, change((folder / name).read_bytes()) if change else None)
    with pytest.raises(ModelError) as python:
        nt.read_native_tables(bundle)
    assert ask(check, bundle, []) == [str(python.value)]


def test_model_json_names_the_tables_or_the_bundle_is_refused(check, folder, tokenizer, tmp_path):  # noqa: F811
    bundle = tables_with(folder, tmp_path)
    (bundle / "model.json").write_text(json.dumps({spec.MANIFEST_KEY: spec.JSON_FILE}))
    assert ask(check, bundle, ["lang en"]) == [str(tokenizer.languages["en"])]
    (bundle / "model.json").write_text(json.dumps({"format": "whisperkv-bundle"}))
    assert ask(check, bundle, []) == [f"{bundle}/model.json names no native tables ({spec.MANIFEST_KEY}): it was "
                                      f"exported before they existed — {nt.EXPORT_FIX}"]
