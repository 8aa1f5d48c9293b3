"""The one way to open a decoder: `open_decoder(target)` for `whisperkv transcribe`, `stream` and `qa`, and the studio.

A decoder decodes one 30 s window per call (`window`, a core.decode.window_feed.DecodeOne); the host's one seek
loop, core/decode/window_feed.py::decode_source, feeds it. On a runner (the local subprocess or a board) each
window is one request; `inprocess` decodes in this process, with no runner and no wire, but says what a runner's
`hello` would (RunnerInfo), so every front end reads one shape.

    with open_decoder(parse_target("local", workload="one-shot")) as decoder:
        decoder.connect()
        for ev in decode_source(MelSource.of_file("clip.wav"), DecodeOptions(), decoder.window):
            ...
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Iterator

import numpy as np

from core.decode.events import Event
from core.decode.options import DecodeOptions
from core.errors import WhisperKVError
from core.model.encoder_cache import EncoderCache
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from device.link.client import BoardClient
from device.link.connect import open_client
from device.link.runner_info import RunnerInfo
from device.link.target import Target
from device.link.transport import Transport
from device.spec.settings import runtime_config
from device.spec.soc import board_soc


class Decoder:
    """What every decoder offers: connect (start the runner or load the model), window, cancel, close."""

    info: RunnerInfo | None = None
    label: str = ""

    def __init__(self):
        self.samples: list[dict] = []     # what the board reported while requests ran (`sample` events), in order
        self.on_sample: Callable[[dict], None] | None = None
        # the Neuron profiler's reports (a runner started with --npu-profile): one entry a window, in order,
        # {"window": i, "backend": name, "files": [{"name": "encoder.csv", "text": ...}, ...]}
        self.npu_reports: list[dict] = []
        self.windows = 0                  # windows decoded (requests sent)
        self.upload_ms = 0.0              # handing the requests' frames to the link, summed
        self.arrivals: list[float] = []   # time.monotonic() of every event, in order
        self.t_start: float | None = None  # time.monotonic() when the first window's request went out
        self._tokenizer = None

    def __enter__(self):
        return self

    def __call__(self, mel: np.ndarray, options: DecodeOptions, n_frames: int) -> Iterator[Event]:
        """A decoder is a core.decode.window_feed.DecodeOne."""
        return self.window(mel, options, n_frames)

    def __exit__(self, *exc) -> None:
        self.close()

    def takes(self, feature: str) -> bool:
        """The runner serves this optional request field (hello.features)."""
        return self.info is not None and feature in self.info.features

    @property
    def languages(self) -> dict | None:
        """The languages to check a request's against before it goes: None for a runner, which checks its own
        (`bad_request`), so this process never loads a tokenizer only for that."""
        return None

    @property
    def tokenizer(self):
        """The tokenizer to read this decoder's tokens with, read once."""
        if self._tokenizer is None:
            self._tokenizer = self._load_tokenizer()
        return self._tokenizer

    def _load_tokenizer(self):
        """The host's copy of Whisper's tokenizer (a runner sends token ids)."""
        return WhisperTokenizer.from_file(find_tokenizer())

    def meta(self) -> dict:
        """Who decoded: what a report, a QA row or a session keeps."""
        info = self.info
        if info is None:
            return {"device": self.label}
        return {"device": self.label, "runner": info.runner, **({"os": info.os} if info.os else {}),
                "backend": info.backend,
                "model_sha256": info.model_sha256, "runner_version": info.runner_version, "dtype": info.dtype,
                "cross": info.cross,
                "ran_on": info.ran_on.to_dict(), **({"soc": info.soc} if info.soc else {}),
                **{k: info.raw[k] for k in ("machine", "runner_kind") if info.raw.get(k)}}

    def link(self) -> dict | None:
        """The link's side of the run: the upload time, and each event's arrival in ms since the first request."""
        return {"device": self.label, "upload_ms": round(self.upload_ms, 3),
                "host_ms": [round((t - (self.t_start or t)) * 1e3, 3) for t in self.arrivals]}

    @property
    def last_t(self) -> float:
        """time.monotonic() when the last event arrived (0.0 before any)."""
        return self.arrivals[-1] if self.arrivals else 0.0

    def _arrived(self, t: float) -> None:
        self.arrivals.append(t)

    def _sampled(self, sample: dict) -> None:
        self.samples.append(sample)
        if self.on_sample is not None:
            self.on_sample(sample)

    def new_run(self) -> None:
        """Forget the figures of earlier runs: a decoder kept open for a session (the studio's) would otherwise
        hold every event's arrival, sample and profile of the session."""
        self.samples, self.npu_reports, self.arrivals = [], [], []
        self.upload_ms, self.t_start, self.windows = 0.0, None, 0

    def npu_files(self, since: int = 0) -> list[tuple[str, str]]:
        """The reports from window `since` on, as (file name, CSV text): what core/model/npu_profile.py reads."""
        return [(f["name"], f["text"]) for r in self.npu_reports[since:] for f in r["files"]]

    def connect(self) -> RunnerInfo:
        raise NotImplementedError

    def window(self, mel: np.ndarray, options: DecodeOptions, n_frames: int) -> Iterator[Event]:
        raise NotImplementedError

    def cancel(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class RunnerDecoder(Decoder):
    """A runner over a BoardClient: one `transcribe` request per window."""

    def __init__(self, client: BoardClient, target: Target | None = None):
        super().__init__()
        self.client, self.target = client, target
        self.label = client.transport.label
        client.on_sample = self._sampled
        client.on_npu_profile = lambda h: self.npu_reports.append(
            {"window": self.windows - 1, "backend": h.get("backend", "?"), "files": list(h.get("files") or [])})

    @property
    def info(self) -> RunnerInfo | None:
        return self.client.info

    def connect(self) -> RunnerInfo:
        info = self.client.connect()
        asked = self.target.backend if self.target is not None else "auto"
        if asked != "auto" and info.backend != asked:
            # a runner that ignores --backend (older than the flag) serves its own choice
            raise WhisperKVError(f"the runner on {self.label} serves backend {info.backend!r}, not {asked!r}",
                                 "deploy this version of the runner with `whisperkv deploy --device URL`")
        if self.target is not None and self.target.npu_profile and not info.raw.get("npu_profile"):
            raise WhisperKVError(f"the runner on {self.label} does not run the Neuron profiler (it predates "
                                 "--npu-profile)", "deploy this version of the runner with `whisperkv deploy "
                                 "--device URL`")
        return info

    def window(self, mel: np.ndarray, options: DecodeOptions, n_frames: int) -> Iterator[Event]:
        self.t_start = self.t_start or time.monotonic()
        self.windows += 1
        stream = self.client.transcribe(mel, options, n_frames=n_frames)
        try:
            for i, arrival in enumerate(stream):
                if i == 0:
                    self.upload_ms += self.client.upload_ms
                self._arrived(arrival.host_t)
                yield arrival.event
        finally:
            stream.close()

    def cancel(self) -> None:
        self.client.cancel()

    def close(self) -> None:
        for close in (self.client.close, self.client.transport.close):   # each SSH transport holds a login
            try:
                close()
            except Exception:  # closing a dead link is not worth an error
                pass


class InProcessDecoder(Decoder):
    """The model in this process (`--device inprocess`): loaded by connect() as the runner loads it."""

    label = "in-process"

    def __init__(self, target: Target):
        super().__init__()
        self.target = target
        self.model = None
        self.encoder_cache = None
        self._cancel = threading.Event()

    def connect(self) -> RunnerInfo:
        if self.model is None:
            # The runner's own loader and hello, imported only here: a host that talks to runners never loads one.
            from device.runner.load import load_model_source
            from device.runner.serve.served_model import hello_of

            t = self.target
            config = runtime_config(t)
            self.model = load_model_source(t.model, t.backend, delegate=t.delegate, config=config)
            # a stream re-sends the same audio pass after pass: the runner's serve workload keeps its cross K/V
            self.encoder_cache = EncoderCache(128 << 20) if t.workload == "serve" else None
            self.info = RunnerInfo.from_hello(hello_of(self.model, board_soc(), {}))
        return self.info

    def _load_tokenizer(self):
        self.connect()
        return self.model.tokenizer

    @property
    def languages(self) -> dict:
        return self.tokenizer.languages

    def window(self, mel: np.ndarray, options: DecodeOptions, n_frames: int) -> Iterator[Event]:
        self._cancel.clear()
        for ev in self.model.transcribe(mel, options, should_cancel=self._cancel.is_set,
                                        encoder_cache=self.encoder_cache, n_frames=n_frames):
            self._arrived(time.monotonic())
            yield ev

    def link(self) -> None:
        return None        # no link: the model is in this process

    def cancel(self) -> None:
        self._cancel.set()

    def close(self) -> None:
        self.model = None


def open_decoder(target: Target, transport: Transport | None = None) -> Decoder:
    """A decoder for `target`, not yet connected (connect() starts the runner, or loads the model in process).
    `transport`: one already opened for the target (the CLI's asks about host keys and passwords on a terminal;
    the studio's local runner runs at a lower priority); by default one is opened from the target's URL."""
    if target.in_process:
        return InProcessDecoder(target)
    return RunnerDecoder(open_client(target, transport=transport), target)
