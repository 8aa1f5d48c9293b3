"""`whisperkv qa`'s devices: each --device URL becomes a decode function (core.qa.parallel.Start)."""
from __future__ import annotations

import threading
from contextlib import ExitStack
from functools import partial

from cli.device_cmds import open_cli_decoder
from cli.transcribe import check_language
from core.errors import ModelError, WhisperKVError
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from device.link.client import RunnerError

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
    return partial(open_device_decoder, args, url, suite)


def open_device_decoder(args, url: str, suite, stack: ExitStack):
    """(the device's decoder, exceptions that fail one clip only, report metadata). The decoder is a
    core.decode.window_feed.DecodeOne, and its `samples` what the board reported (core/qa/run.py)."""
    with _ASKING:
        decoder = stack.enter_context(open_cli_decoder(args, "lean", url))
    decoder.connect()
    for clip in suite.clips:          # in process; a runner checks each request's language itself
        check_language(clip.language, decoder.languages)
    return decoder, (RunnerError,), decoder.meta()


def _installed_languages() -> dict | None:
    """Whisper's language codes from the tokenizer installed here, or None when there is none."""
    try:
        return WhisperTokenizer.from_file(find_tokenizer()).languages
    except ModelError:
        return None
