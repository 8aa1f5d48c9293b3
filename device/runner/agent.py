"""The board runner: `python -m device.runner [--model DIR] [--backend auto|onnx|numpy]`.

Serves docs/protocol.md on stdin/stdout. The model loads once; requests run one after another
on the main thread while a reader thread parses frames, so `cancel` lands between decode steps.
Logs go to stderr; fd 1 is re-pointed at stderr so nothing but frames can reach the host.
"""
from __future__ import annotations

import argparse
import inspect
import json
import logging
import math
import os
import queue
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from device import protocol as P

log = logging.getLogger("whisperkv.agent")
ROOT = Path(__file__).resolve().parents[2]   # the directory holding device/ and core/
MAX_ID = 128


@dataclass
class Job:
    id: str
    mel: object          # np.ndarray [W, 80, 3000] float32
    options: object      # core.decoding.DecodeOptions
    n_frames: int | None = None   # mel frames holding audio; the rest of the last window is padding


def _json_default(o):
    if hasattr(o, "item"):       # NumPy scalar
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _finite(o):
    """JSON has no NaN/Inf, and a C++ host may refuse them: send null instead."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def _dumps(header: dict) -> bytes:
    try:
        return json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                          default=_json_default).encode()
    except ValueError:
        return json.dumps(_finite(json.loads(json.dumps(header, default=_json_default))),
                          separators=(",", ":"), ensure_ascii=False).encode()


class Writer:
    """Whole frames only, from any thread."""

    def __init__(self, fd: int):
        self.fd = fd
        self.lock = threading.Lock()
        self.broken = False

    def send(self, header: dict) -> None:
        with self.lock:
            if self.broken:
                return
            # The runner's monotonic clock at write time: on the same host as the client (local, loopback
            # SSH) it is the host's clock too, so arrival minus sent_t is the link's one-way latency.
            raw = _dumps({**header, "sent_t": round(time.monotonic(), 6)})
            data = P._LEN.pack(len(raw)) + raw
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view):]
            except OSError:          # host went away; the reader sees EOF and shuts us down
                self.broken = True


class Model:
    """The loaded backend and tokenizer, or the reason they could not be loaded."""

    def __init__(self, path: str | None, backend: str, encoder_cache_mb: int = 128):
        self.error: str | None = None
        self.backend = self.tokenizer = self.weights = None
        self.backend_name = backend
        self.encoder_cache = None
        t0 = time.perf_counter()
        try:
            import core.decode.decoding  # noqa: F401  (import cost paid at start, not on the first request)
            from core.model.encoder_cache import EncoderCache
            from device.runner.backends import load_runner_model

            # A CTranslate2/HF directory, the wheels, or an exported bundle (model.json); `auto`
            # is the fastest backend whose tokens equal the reference (onnx when onnxruntime is here).
            self.weights = load_runner_model(path, backend)     # .sha256 and .source for hello
            self.backend, self.tokenizer = self.weights.backend, self.weights.tokenizer
            backend = self.backend.name
            # Reruns of the same audio (cache on/off comparisons, QA) skip the encoder.
            self.encoder_cache = EncoderCache(encoder_cache_mb << 20)
            log.info("model %s (%s) on %s backend loaded in %.1f s", self.weights.sha256[:12],
                     self.weights.source, backend, time.perf_counter() - t0)
        except Exception as exc:           # served as model_missing errors, never a dead runner
            self.error = str(exc)
            log.error("model not loaded: %s", exc)

    def hello(self, limits: dict) -> dict:
        dims = self.backend.dims
        bytes_per_token = 2 * dims.n_text_layer * dims.n_text_state * 4
        return {"type": "hello", "protocol": P.PROTOCOL, "runner_version": P.RUNNER_VERSION,
                "backend": self.backend.name,
                "model": {"dims": asdict(dims), "sha256": self.weights.sha256, "source": self.weights.source},
                "cache": {"max_len": dims.n_text_ctx, "bytes_per_token": bytes_per_token},
                "limits": limits,
                "mel_dtypes": list(P.MEL_DTYPES)}


def parse_options(h: dict, tokenizer, rid: str):
    """The transcribe header's decode options, checked; ProtocolError(bad_request) on any bad field."""
    from core.decode.decoding import DecodeOptions

    def bad(msg):
        return P.ProtocolError(P.BAD_REQUEST, msg, rid)

    language = h.get("language")
    if language in ("auto", ""):
        language = None
    if language is not None and (not isinstance(language, str) or language not in tokenizer.languages):
        raise bad(f"unknown language {language!r}; use null for auto-detect or a code such as 'en'")
    task = h.get("task", "transcribe")
    if task not in ("transcribe", "translate"):
        raise bad(f"task {task!r} is not 'transcribe' or 'translate'")
    cache = h.get("cache", "on")
    if cache not in ("on", "off"):
        raise bad(f"cache {cache!r} is not 'on' or 'off'")
    max_tokens = h.get("max_tokens", 224)
    if type(max_tokens) is not int or not 1 <= max_tokens <= 448:
        raise bad(f"max_tokens {max_tokens!r} is not an integer in 1..448")
    top_k = h.get("top_k", 5)
    if type(top_k) is not int or not 1 <= top_k <= 100:
        raise bad(f"top_k {top_k!r} is not an integer in 1..100")
    flags = {}
    for name in ("timestamps", "suppress_eot"):
        flags[name] = h.get(name, False)
        if type(flags[name]) is not bool:
            raise bad(f"{name} {flags[name]!r} is not true or false")
    return DecodeOptions(language=language, task=task, cache=cache == "on", max_tokens=max_tokens,
                         top_k=top_k, **flags)


class Agent:
    def __init__(self, model: Model, out_fd: int, max_header: int = P.MAX_HEADER,
                 max_payload: int = P.MAX_PAYLOAD):
        self.model = model
        self.limits = {"max_header": max_header, "max_payload": max_payload}
        self.out = Writer(out_fd)
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.lock = threading.Lock()
        self.pending: set[str] = set()       # ids queued or running
        self.cancelled: set[str] = set()

    # --- reader thread ---------------------------------------------------------------------------
    def read_loop(self, in_fd: int) -> None:
        parser = P.FrameParser(**self.limits)
        try:
            while True:
                data = os.read(in_fd, 1 << 16)
                if not data:
                    if not parser.at_boundary:
                        log.warning("EOF inside a frame; the last request was truncated")
                    break
                for item in parser.feed(data):
                    if isinstance(item, P.BadFrame):
                        self.out.send(P.error_event(item.code, item.message, item.id))
                    elif self.handle(item) == "bye":
                        return
        except OSError as exc:
            log.warning("stdin failed: %s", exc)
        finally:
            self.shutdown()

    def handle(self, frame: P.Frame) -> str | None:
        h = frame.header
        op = h.get("op")
        rid = h.get("id")
        try:
            if rid is not None and (not isinstance(rid, str) or not 0 < len(rid) <= MAX_ID):
                raise P.ProtocolError(P.BAD_REQUEST, f"id must be a string of 1..{MAX_ID} characters")
            if not isinstance(op, str):
                raise P.ProtocolError(P.BAD_FRAME, "header has no string 'op'", rid)
            if op == "hello":
                if h.get("protocol", P.PROTOCOL) != P.PROTOCOL:
                    raise P.ProtocolError(P.BAD_PROTOCOL, f"this runner speaks protocol {P.PROTOCOL}, "
                                          f"not {h.get('protocol')!r}; deploy a matching runner")
                self._need_model(rid)
                self.out.send(self.model.hello(self.limits))
            elif op == "transcribe":
                self.submit(h, frame.payload)
            elif op == "cancel":
                if rid is None:
                    raise P.ProtocolError(P.BAD_REQUEST, "cancel needs the id of the request to stop")
                with self.lock:
                    if rid in self.pending:   # unknown or finished ids: the race is normal, ignore
                        self.cancelled.add(rid)
            elif op == "bye":
                return "bye"
            else:
                raise P.ProtocolError(P.UNKNOWN_OP, f"unknown op {op!r}; expected one of "
                                      f"{', '.join(P.REQUEST_OPS)}", rid)
        except P.ProtocolError as exc:
            self.out.send(P.error_event(exc.code, exc.message, exc.id))
        except Exception as exc:        # a bug must cost one request, never the runner
            log.exception("request handling failed")
            rid = rid if isinstance(rid, str) else None
            self.out.send(P.error_event(P.INTERNAL, f"{type(exc).__name__}: {exc}", rid))
        return None

    def _need_model(self, rid):
        if self.model.error:
            raise P.ProtocolError(P.MODEL_MISSING, self.model.error, rid)

    def submit(self, h: dict, payload: bytes) -> None:
        rid = h.get("id")
        if rid is None:
            raise P.ProtocolError(P.BAD_REQUEST, "transcribe needs an id")
        self._need_model(rid)
        mel = P.mel_from_payload(h.get("mel"), payload, rid)
        options = parse_options(h, self.model.tokenizer, rid)
        n_frames = h.get("n_frames")
        if n_frames is not None and (type(n_frames) is not int or not 1 <= n_frames <= mel.shape[0] * P.N_FRAMES):
            raise P.ProtocolError(P.BAD_REQUEST, f"n_frames {n_frames!r} is not an integer in "
                                  f"1..{mel.shape[0] * P.N_FRAMES}", rid)
        with self.lock:
            if rid in self.pending:
                raise P.ProtocolError(P.BUSY, f"request {rid!r} is still running; use a new id", rid)
            self.pending.add(rid)
        self.jobs.put(Job(rid, mel, options, n_frames))

    def shutdown(self) -> None:
        """bye or EOF: nobody is listening any more, so stop the decode at its next step."""
        with self.lock:
            self.cancelled |= self.pending
        self.jobs.put(None)

    # --- main thread -----------------------------------------------------------------------------
    def serve(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                self.run(job)
            finally:
                with self.lock:
                    self.pending.discard(job.id)
                    self.cancelled.discard(job.id)

    def run(self, job: Job) -> None:
        from core.decode.decoding import decode_windows
        from core.decode.events import event_to_dict

        should_cancel = lambda: job.id in self.cancelled  # noqa: E731
        extra = {"n_frames": job.n_frames} if job.n_frames and _accepts("n_frames", decode_windows) else {}
        held = None    # a window's done waits for the next event: only then is it known whether it is final
        try:
            for ev in decode_windows(self.model.backend, self.model.tokenizer, job.mel, job.options,
                                     should_cancel, self.model.encoder_cache, **extra):
                if held is not None:
                    self.out.send({**held, "final": False})
                    held = None
                d = {**event_to_dict(ev), "id": job.id}
                if d["type"] == "done":
                    held = d
                else:
                    self.out.send(d)
            if held is not None:
                self.out.send({**held, "final": True})
            else:              # cancelled before a window began: the decoder had nothing to report
                self.out.send({"type": "done", "id": job.id, "window": 0, "reason": "cancelled", "tokens": [],
                               "text": "", "ms_total": 0.0, "final": True})
        except Exception as exc:
            log.exception("request %s failed", job.id)
            if held is not None:
                self.out.send({**held, "final": False})
            self.out.send(P.error_event(P.INTERNAL, f"{type(exc).__name__}: {exc}", job.id))


def _accepts(name: str, fn) -> bool:
    return name in inspect.signature(fn).parameters


def default_model() -> str | None:
    """A deployed bundle sits in model/ beside device/; otherwise use the installed wheels."""
    env = os.environ.get("WHISPERKV_MODEL")
    if env:
        return env
    return str(ROOT / "model") if (ROOT / "model").is_dir() else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m device.runner", description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model directory (default: ./model beside the runner, "
                    "else the installed wheels)")
    ap.add_argument("--backend", default="auto", help="auto (default: the fastest available), onnx, numpy, "
                    "onnx-fp16 or onnx-int8")
    ap.add_argument("--encoder-cache-mb", type=int, default=128, help="cross K/V kept for reruns (0: off)")
    ap.add_argument("--max-header", type=int, default=P.MAX_HEADER, help=argparse.SUPPRESS)
    ap.add_argument("--max-payload", type=int, default=P.MAX_PAYLOAD, help="largest mel payload in bytes")
    ap.add_argument("--log-level", default="INFO")
    args = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="agent %(levelname)s %(message)s")

    out_fd = os.dup(1)
    os.dup2(2, 1)          # stray prints, from us or a library, now land in the log
    sys.stdout = sys.stderr
    model = Model(args.model or default_model(), args.backend, args.encoder_cache_mb)
    agent = Agent(model, out_fd, args.max_header, args.max_payload)
    threading.Thread(target=agent.read_loop, args=(0,), name="reader", daemon=True).start()
    agent.serve()
    log.info("bye")
    return 0


if __name__ == "__main__":
    sys.exit(main())
