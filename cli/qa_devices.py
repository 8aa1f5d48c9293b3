"""`whisperkv qa`'s devices: each --device URL becomes a decode function (core.qa.parallel.Start)."""
from __future__ import annotations

import argparse
import threading
from contextlib import ExitStack
from dataclasses import replace
from functools import partial

from cli.device_cmds import open_device
from cli.transcribe import check_language
from core.errors import ModelError, WhisperKVError
from core.model.backend import AttentionBackend
from core.model.placement import of_backend

_ASKING = threading.Lock()    # on a terminal, open_device may ask about a host key or a password: one at a time


def device_urls(args) -> list[str]:
    """The --device URLs in the order given (default: local); each at most once, since a report's
    clips are told apart, and matched against a baseline, by device."""
    urls = args.device or ["local"]
    twice = sorted({u for u in urls if urls.count(u) > 1})
    if twice:
        raise WhisperKVError(f"--device {twice[0]} is given twice", "give each device once")
    return urls


def check_languages(suite, urls: list[str]) -> None:
    """A typo in the suite is a setup error here, not one runner error per clip per device
    (in-process decodes check against their own model's tokenizer when it loads)."""
    known = _installed_languages() if any(u != "inprocess" for u in urls) else None
    for clip in suite.clips:
        if known:
            check_language(clip.language, known)


def starter(args, url: str, suite):
    """start(stack) → (decode, clip_errors, meta) for one device."""
    return partial(open_decoder, args, url, suite)


def open_decoder(args, url: str, suite, stack: ExitStack):
    """(decode(mels, options, n_frames) → events, exceptions that fail one clip only, report metadata)."""
    if url == "inprocess":
        from device.runner.backends import resolve
        from device.runner.load import load_model_source
        from device.runner.runtime_config import for_process

        resolve(args.backend)                # an unknown name fails before the model load
        # weights, or an exported bundle, as the runner takes them
        model = load_model_source(args.model, args.backend, config=for_process("lean"))
        for clip in suite.clips:
            check_language(clip.language, model.tokenizer.languages)
        meta = {"device": "in-process", "backend": model.backend.name, "model_sha256": model.sha256,
                "dtype": getattr(model.backend, "dtype", ""), "cross": getattr(model.backend, "cross", "kv"),
                "ran_on": of_backend(model.backend).to_dict()}
        heatmap = isinstance(model.backend, AttentionBackend)     # only the report's: the dla has none
        return (lambda mels, options, n: model.transcribe(mels, replace(options, attention=options.attention and
                                                                        heatmap), n_frames=n)), (), meta

    from device.link.client import RunnerError
    from device.link.connect import open_client

    with _ASKING:
        transport = stack.enter_context(open_device(argparse.Namespace(**{**vars(args), "device": url})))
    client = open_client(url, transport=transport)
    if args.model:
        client.runner_args += ["--model", args.model]      # a path on the device
    stack.callback(client.close)
    info = client.connect()
    meta = {"device": transport.label, "backend": info.backend, "model_sha256": info.model_sha256,
            "runner_version": info.runner_version, "dtype": info.dtype, "cross": info.cross,
            "ran_on": info.ran_on.to_dict(),
            **({"soc": info.soc} if info.soc else {})}
    return ClientDecode(client), (RunnerError,), meta


class ClientDecode:
    """core.qa.run's decode over a connected client; samples() is what the board reported during the last clip."""

    def __init__(self, client):
        self.client = client

    def __call__(self, mels, options, n_frames):
        if options.attention and "attention" not in self.client.info.features:
            options = replace(options, attention=False)     # only the report's heatmap: the dla has none
        return (arrival.event for arrival in self.client.transcribe(mels, options, n_frames=n_frames))

    def samples(self) -> list[dict]:
        return list(self.client.samples)


def _installed_languages() -> dict | None:
    """Whisper's language codes from the tokenizer installed here, or None when there is none."""
    from core.model.tokenizer import WhisperTokenizer
    from core.model.weights import find_tokenizer

    try:
        return WhisperTokenizer.from_file(find_tokenizer()).languages
    except ModelError:
        return None
