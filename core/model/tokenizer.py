"""Whisper's multilingual tokenizer: special tokens, byte-level BPE decoding, streaming UTF-8.

Read from tokenizer.json with the standard library (a board image has no `tokenizers` package); encoding is
core/model/bpe.py's."""
from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from core.errors import ModelError
from core.model.bpe import UNICODE_TO_BYTE, BytePairEncoder
from core.model.dims import ModelDims

_LANG_RE = re.compile(r"^<\|([a-z]{2,3}|haw|yue)\|>$")


@dataclass(frozen=True)
class SpecialTokens:
    eot: int
    sot: int
    translate: int
    transcribe: int
    sot_lm: int
    sot_prev: int
    no_speech: int
    no_timestamps: int
    timestamp_begin: int


class WhisperTokenizer:
    def __init__(self, spec: dict, n_vocab: int = ModelDims.n_vocab):
        model = spec["model"]
        added = {a["content"]: a["id"] for a in spec.get("added_tokens", ())}
        self._ids = {**model["vocab"], **added}
        self._names = {i: name for name, i in self._ids.items()}
        self._bpe_parts = (model["vocab"], model["merges"], added)
        self.n_vocab = n_vocab
        t = self._ids.get
        self.special = SpecialTokens(
            eot=t("<|endoftext|>"), sot=t("<|startoftranscript|>"), translate=t("<|translate|>"),
            transcribe=t("<|transcribe|>"), sot_lm=t("<|startoflm|>"), sot_prev=t("<|startofprev|>"),
            no_speech=t("<|nospeech|>") or t("<|nocaptions|>"), no_timestamps=t("<|notimestamps|>"),
            timestamp_begin=t("<|notimestamps|>") + 1)
        self.languages: dict[str, int] = {}
        self._bytes: dict[int, bytes] = {}   # token_bytes memo: the lookup costs ~35 µs between two decoder steps
        for i in range(self.special.sot + 1, self.special.translate):
            m = _LANG_RE.match(self._names.get(i, ""))
            if m:
                self.languages[m.group(1)] = i

    @classmethod
    def from_file(cls, path: str | Path, n_vocab: int = ModelDims.n_vocab) -> "WhisperTokenizer":
        try:
            with open(path, encoding="utf-8") as f:
                return cls(json.load(f), n_vocab)
        except Exception as exc:
            raise ModelError(f"cannot read the tokenizer at {path} ({exc})",
                             "reinstall the model or pass --model with a complete directory") from exc

    @classmethod
    def from_weights(cls, weights) -> "WhisperTokenizer":
        return cls.from_file(weights.tokenizer_path, weights.dims.n_vocab)

    @property
    def eot(self) -> int:
        return self.special.eot

    def is_special(self, token: int) -> bool:
        return token >= self.special.eot

    def language_token(self, code: str) -> int:
        if code not in self.languages:
            raise ValueError(f"unknown language {code!r}; known: {', '.join(sorted(self.languages))}")
        return self.languages[code]

    def language_code(self, token: int) -> str:
        return next(code for code, t in self.languages.items() if t == token)

    def sot_sequence(self, language: str | None, task: str = "transcribe", timestamps: bool = False) -> list[int]:
        seq = [self.special.sot]
        if language is not None:
            seq.append(self.language_token(language))
            seq.append(self.special.translate if task == "translate" else self.special.transcribe)
            if not timestamps:
                seq.append(self.special.no_timestamps)
        return seq

    def token_bytes(self, token: int) -> bytes:
        """Raw UTF-8 bytes a text token stands for (b"" for special and timestamp tokens)."""
        data = self._bytes.get(token)
        if data is None:
            piece = "" if self.is_special(token) else self._names.get(token, "")
            data = self._bytes[token] = bytes(UNICODE_TO_BYTE[c] for c in piece)
        return data

    def token_label(self, token: int) -> str:
        """A printable label: the special token's name, or the token's text."""
        if token >= self.special.timestamp_begin:
            return f"<|{(token - self.special.timestamp_begin) * 0.02:.2f}|>"
        if self.is_special(token):
            return self._names.get(token) or f"<|{token}|>"
        return self.token_bytes(token).decode("utf-8", errors="replace")

    @cached_property
    def _bpe(self) -> BytePairEncoder:
        return BytePairEncoder(*self._bpe_parts)

    def encode(self, text: str) -> list[int]:
        """Text -> ids; special tokens written in the text become their ids, as `tokenizers` does."""
        return self._bpe.encode(text)

    def decode(self, tokens: list[int]) -> str:
        return b"".join(self.token_bytes(t) for t in tokens).decode("utf-8", errors="replace")

    @cached_property
    def non_speech_tokens(self) -> list[int]:
        """Tokens of symbols and music notes that Whisper never transcribes from speech."""
        symbols = list('"#()*+/:;<=>@[\\]^_`{|}~「」『』')
        symbols += "<< >> <<< >>> -- --- -( -[ (' (\" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪".split()
        misc = set("♩♪♫♬♭♮♯")
        result = {self.encode(" -")[0], self.encode(" '")[0]}
        for symbol in symbols + sorted(misc):
            for tokens in (self.encode(symbol), self.encode(" " + symbol)):
                if len(tokens) == 1 or symbol in misc:
                    result.add(tokens[0])
        return sorted(result)


class Utf8Assembler:
    """Turns a stream of token bytes into text without ever showing half a character.

    A CJK character is three UTF-8 bytes and byte-level BPE may split it across tokens; the
    incremental decoder holds the incomplete tail until the next token completes it.
    """

    def __init__(self):
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.text = ""

    def push(self, data: bytes) -> str:
        piece = self._dec.decode(data, final=False)
        self.text += piece
        return piece

    def flush(self) -> str:
        piece = self._dec.decode(b"", final=True)
        self.text += piece
        return piece
