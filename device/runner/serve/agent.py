"""The board runner: `python -m device.runner [--model DIR] [--backend NAME] [--workload NAME] [--delegate PATH] ...`
(its settings' flags: device/spec/settings.py).

Serves docs/protocol.md on stdin/stdout. The model loads once; requests run one after another
on the main thread while a reader thread parses frames, so `cancel` lands between decode steps.
Logs go to stderr; fd 1 is re-pointed at stderr so nothing but frames can reach the host.
One runner serves one connection: at bye, EOF or a broken stdout it cancels what runs and exits, so a
client that vanished leaves the board idle for the next one, which starts its own runner.
"""
from __future__ import annotations

import argparse
import logging
import os
import queue
import shutil
import sys
import threading
from dataclasses import dataclass, replace

import numpy as np

from core.decode.events import event_to_dict
from core.decode.options import DecodeOptions
from device import ROOT
from device import protocol as P
from device.runner.backends import REGISTRY
from device.runner.cache_paths import cache_home
from device.runner.neuron.npu_profile import switch_on
from device.runner.serve.heap import steady_heap
from device.runner.serve.probe import probe
from device.runner.serve.sampler import Sampler
from device.runner.serve.served_model import ServedModel
from device.runner.serve.writer import Writer
from device.spec.settings import add_runner_args, runtime_config

log = logging.getLogger("whisperkv.agent")
MAX_ID = 128


@dataclass
class Job:
    id: str
    mel: np.ndarray      # [1, 80, 3000] float32: one window (protocol 2)
    options: DecodeOptions
    n_frames: int | None = None   # mel frames holding audio; the rest of the last window is padding
    sample_s: float | None = None    # send `sample` events this often while the request runs (device/runner/serve/sampler.py)
    sampler: object | None = None    # its Sampler, stopped before the request's last event
    op: str = "transcribe"           # or "probe": the graphs' outputs for the doctor (device/runner/serve/probe.py)


class Agent:
    def __init__(self, served: ServedModel, out_fd: int, max_header: int = P.MAX_HEADER,
                 max_payload: int = P.MAX_PAYLOAD):
        self.served = served
        self.limits = {"max_header": max_header, "max_payload": max_payload}
        # A broken stdout means the host is gone: stop decoding for nobody, as at EOF, and end the runner.
        self.out = Writer(out_fd, on_broken=self.shutdown)
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
                self._check_protocol(h.get("protocol", P.PROTOCOL))
                self._need_model(rid)
                self.out.send(self.served.hello(self.limits))
            elif op in ("transcribe", "probe"):
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
            self.out.send(P.error_event(exc.code, exc.message, exc.id, exc.fix))
        except Exception as exc:        # a bug must cost one request, never the runner
            log.exception("request handling failed")
            rid = rid if isinstance(rid, str) else None
            self.out.send(P.internal_error(exc, rid))
        return None

    @staticmethod
    def _check_protocol(asked) -> None:
        """A host of another protocol is told which side to update, in the message it shows."""
        if asked == P.PROTOCOL:
            return
        if isinstance(asked, int) and asked < P.PROTOCOL:
            raise P.ProtocolError(P.BAD_PROTOCOL, f"this runner speaks protocol {P.PROTOCOL} (one 30 s window per "
                                  f"request, the host seeks), the host {asked}; update whisperkv on the host")
        raise P.ProtocolError(P.BAD_PROTOCOL, f"this runner speaks protocol {P.PROTOCOL}, the host {asked!r}; "
                              "deploy the host's runner with `whisperkv deploy --device URL`")

    def _need_model(self, rid):
        if self.served.error:
            raise P.ProtocolError(P.MODEL_MISSING, self.served.error, rid, self.served.error_fix)

    def submit(self, h: dict, payload: bytes) -> None:
        rid = h.get("id")
        if rid is None:
            raise P.ProtocolError(P.BAD_REQUEST, "transcribe needs an id")
        self._need_model(rid)
        mel = P.mel_from_payload(h.get("mel"), payload, rid)
        if h["op"] == "probe":
            self._queue(Job(rid, mel, None, op="probe"))
            return
        options = self.served.options(h, rid)
        n_frames = h.get("n_frames")
        if n_frames is not None and (type(n_frames) is not int or not 1 <= n_frames <= P.N_FRAMES):
            raise P.ProtocolError(P.BAD_REQUEST, f"n_frames {n_frames!r} is not an integer in 1..{P.N_FRAMES}", rid)
        held = self.served.model.backend.dims.window_frames(options.window_s)
        if (n_frames or P.N_FRAMES) > held:
            raise P.ProtocolError(P.BAD_REQUEST, f"n_frames {n_frames or P.N_FRAMES} (absent: the whole window) is "
                                  f"more than the {options.window_s} s window's {held} frames: the audio past it "
                                  "would go unheard; send n_frames, or a longer window_s", rid)
        sample_s = h.get("sample_s")
        if sample_s is not None and (type(sample_s) not in (int, float) or not 0.1 <= sample_s <= 60):
            raise P.ProtocolError(P.BAD_REQUEST, f"sample_s {sample_s!r} is not a number of seconds in 0.1..60", rid)
        self._queue(Job(rid, mel, options, n_frames, sample_s))

    def _queue(self, job: Job) -> None:
        with self.lock:
            if job.id in self.pending:
                raise P.ProtocolError(P.BUSY, f"request {job.id!r} is still running; use a new id", job.id)
            self.pending.add(job.id)
        self.jobs.put(job)

    def shutdown(self) -> None:
        """bye, EOF or a broken stdout: nobody is listening any more, so stop the decode at its next step."""
        with self.lock:
            self.cancelled |= self.pending
        self.jobs.put(None)

    # --- main thread -----------------------------------------------------------------------------
    def serve(self) -> None:
        while (job := self.jobs.get()) is not None:
            if job.sample_s:
                job.sampler = Sampler(job.sample_s, lambda s, rid=job.id: self.out.send({**s, "id": rid})).start()
            try:
                self.run(job)
            finally:
                if job.sampler:
                    job.sampler.close()
                with self.lock:
                    self.pending.discard(job.id)
                    self.cancelled.discard(job.id)

    def run(self, job: Job) -> None:
        if job.op == "probe":
            return self.run_probe(job)
        should_cancel = lambda: job.id in self.cancelled  # noqa: E731
        done = None
        try:
            for ev in self.served.model.transcribe(job.mel, job.options, should_cancel, self.served.encoder_cache,
                                                   job.n_frames):
                d = {**event_to_dict(ev), "id": job.id}
                if d["type"] == "done":
                    done = d       # sent last, after the sampler stops
                else:
                    self.out.send(d)
            if job.sampler:
                job.sampler.close()     # no sample after the request's last event
            self._send_npu_profile(job)
            # cancelled before the window began, the decoder had nothing to report
            self.out.send({**(done or {"type": "done", "id": job.id, "window": 0, "reason": "cancelled",
                                       "tokens": [], "text": "", "ms_total": 0.0}), "final": True})
        except Exception as exc:
            log.exception("request %s failed", job.id)
            if job.sampler:
                job.sampler.close()
            self._send_npu_profile(job)      # what ran before the failure was profiled too
            self.out.send(P.internal_error(exc, job.id))

    def run_probe(self, job: Job) -> None:
        try:
            model = self.served.model
            self.out.send({"type": "probe", "id": job.id, "final": True,
                           **probe(model.backend, model.tokenizer.special.sot, job.mel)})
        except Exception as exc:
            log.exception("probe %s failed", job.id)
            self.out.send(P.internal_error(exc, job.id))

    def _send_npu_profile(self, job: Job) -> None:
        """With the profiler on: the request's reports, before the event that ends it."""
        try:
            files = self.served.npu_report()
        except Exception as exc:          # a runtime that cannot be created again: the next request says so
            log.warning("the NPU profile of request %s was lost: %s", job.id, exc)
            return
        if files is not None:
            self.out.send({"type": "npu_profile", "id": job.id, "backend": self.served.model.backend.name,
                           "files": files})


def default_model() -> str | None:
    """A deployed bundle sits in model/ beside device/; otherwise use the installed wheels."""
    env = os.environ.get("WHISPERKV_MODEL")
    if env:
        return env
    return str(ROOT / "model") if (ROOT / "model").is_dir() else None


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m device.runner", description=f"{__doc__.splitlines()[0]} NAME: auto, "
                                 f"{', '.join(REGISTRY)}.")
    add_runner_args(ap)
    ap.add_argument("--encoder-cache-mb", type=int, default=128, help="cross K/V kept for reruns (0: off)")
    ap.add_argument("--max-header", type=int, default=P.MAX_HEADER, help=argparse.SUPPRESS)
    ap.add_argument("--max-payload", type=int, default=P.MAX_PAYLOAD, help="largest mel payload in bytes")
    ap.add_argument("--log-level", default="INFO")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="agent %(levelname)s %(message)s")

    profile_dir = str(switch_on(cache_home() / f"npu-profile-{os.getpid()}")) if args.npu_profile else None
    # before any backend loads
    config = replace(runtime_config(args), npu_profile=profile_dir)
    steady_heap()
    out_fd = os.dup(1)
    os.dup2(2, 1)          # stray prints, from us or a library, now land in the log
    sys.stdout = sys.stderr
    served = ServedModel(args.model or default_model(), args.backend, args.encoder_cache_mb, args.delegate, config)
    agent = Agent(served, out_fd, args.max_header, args.max_payload)
    threading.Thread(target=agent.read_loop, args=(0,), name="reader", daemon=True).start()
    agent.serve()
    if profile_dir:
        shutil.rmtree(profile_dir, ignore_errors=True)    # its reports went to the host after each request
    log.info("bye")
    return 0


if __name__ == "__main__":
    sys.exit(main())
