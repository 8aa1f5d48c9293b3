"""BoardClient: the host side of docs/protocol.md over any transport.

    with BoardClient(LocalTransport()) as client:
        for arrival in client.transcribe(mels, DecodeOptions(language="en")):
            print(arrival.host_ms, arrival.event)
"""
from __future__ import annotations

import threading
import time
import uuid
from typing import Callable, Iterator

from core.decode.events import event_from_dict
from core.decode.options import DecodeOptions
from core.errors import FeatureError, Fix, Setting, WhisperKVError
from device import protocol as P
from device.link.runner_info import Arrival, RunnerInfo
from device.link.transport import LinkLost, Stream, Transport

LINK_FIX = "check that the device is up and reachable, then retry; the events received so far are kept"
START_FIX = Fix("deploy the runner with `whisperkv deploy --device URL`, or point the URL at it with ",
                Setting("dir", "RUNNER_DIR", more=(("python", "/path/to/python3"),)))


class LinkTimeout(LinkLost):
    code = "link_timeout"


class RunnerError(WhisperKVError):
    """The runner answered with an `error` event; `.code` is the protocol error code."""

    def __init__(self, code: str, message: str, fix: str = ""):
        super().__init__(f"the runner refused the request ({code}): {message}", fix)
        self.code = code


_FIXES = {
    P.MODEL_MISSING: Fix("deploy the model with `whisperkv deploy --device URL`, or ", Setting("model", "DIR", "pass")),
    P.BAD_PROTOCOL: "deploy this version of the runner with `whisperkv deploy --device URL`",
    P.BAD_MEL: "send one [1, 80, 3000] float16/float32 log-mel window with finite values",
}


def refusal(h: dict) -> RunnerError:
    """The runner's `error` event as a RunnerError. Its message may end with the runner's fix: when the event's
    `fix` carries that fix's parts (docs/protocol.md), the problem stops before it and the fix is that Fix, then
    the host's, so `str()` reads the same line and the studio words the settings it names."""
    code, message, fix = h.get("code", "?"), h.get("message", ""), _FIXES.get(h.get("code"), "")
    try:
        theirs = Fix.from_wire(h["fix"]) if "fix" in h else None
    except ValueError:
        theirs = None
    if not theirs or not isinstance(message, str) or not message.endswith(f" — {theirs}"):
        return RunnerError(code, message, fix)
    return RunnerError(code, message[:-len(f" — {theirs}")], Fix.join(" — ", [theirs, fix] if fix else [theirs]))


REFERENCE_KERNELS_TIMEOUT = 900.0


class BoardClient:
    def __init__(self, transport: Transport, *, runner_args: list[str] | None = None,
                 connect_timeout: float = 120.0, read_timeout: float = 60.0, mel_dtype: str = "float16"):
        self.transport = transport
        self.runner_args = list(runner_args or [])
        self.connect_timeout = connect_timeout   # includes the runner loading its model
        self.read_timeout = read_timeout         # longest silence tolerated mid-request
        self.mel_dtype = mel_dtype
        self.info: RunnerInfo | None = None
        self.received: list[Arrival] = []        # events of the current/last request, kept on failure
        self.upload_ms = 0.0                     # time to hand the last request's frame to the link
        # What the board pays: a runner that lists the `samples` feature sends one `sample` event this often
        # while a request runs. They are kept here (and passed to on_sample), not yielded as decode events.
        self.sample_s: float | None = 1.0
        self.samples: list[dict] = []            # the current/last request's
        self.on_sample: Callable[[dict], None] | None = None
        # A runner started with --npu-profile sends its Neuron profiler's reports after each request.
        self.on_npu_profile: Callable[[dict], None] | None = None
        self._stream: Stream | None = None
        self._ended: Stream | None = None        # the last runner's stream, closed: its stderr for a report
        self._parser = P.FrameParser(max_payload=0)
        self._frames: list[tuple[float, P.Frame | P.BadFrame]] = []
        self._send_lock = threading.Lock()
        self._active: str | None = None

    # --- connection ---------------------------------------------------------------------------------
    def connect(self) -> RunnerInfo:
        if self._stream is None:
            self._stream = self.transport.start_runner(self.runner_args)
            self._parser = P.FrameParser(max_payload=0)
            self._frames.clear()
            self.info = None
        if self.info is None:
            self._send({"op": "hello", "protocol": P.PROTOCOL})
            while True:
                _, h = self._next(self.connect_timeout, "waiting for the runner's hello", START_FIX)
                if h.get("type") == "hello":
                    if h.get("protocol") != P.PROTOCOL:
                        raise RunnerError(P.BAD_PROTOCOL, f"the runner on {self.transport.label} speaks protocol "
                                          f"{h.get('protocol')!r}, this host {P.PROTOCOL}", _FIXES[P.BAD_PROTOCOL])
                    self.info = RunnerInfo.from_hello(h)
                    detail = h.get("backend_detail") or {}
                    if detail.get("quantized") and not detail.get("delegate"):
                        # Integer graphs on the CPU: LiteRT's int16 kernels are reference kernels, and one
                        # encoder call takes a minute or more on a PC before the first event.
                        self.read_timeout = max(self.read_timeout, REFERENCE_KERNELS_TIMEOUT)
                    break
                if h.get("type") == "error":
                    raise refusal(h)
        return self.info

    def stderr_tail(self) -> str:
        """The last lines the runner logged: the running one's, else the last one's ("" before any)."""
        stream = self._stream or self._ended
        return stream.stderr_tail() if stream is not None else ""

    def close(self) -> None:
        stream, self._stream = self._stream, None
        self._ended = stream or self._ended
        if stream is not None:
            try:
                with self._send_lock:
                    stream.write(P.encode_frame({"op": "bye"}))
            except (LinkLost, OSError):
                pass
            stream.close()
        self.info = None

    def __enter__(self) -> "BoardClient":
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- requests ----------------------------------------------------------------------------------
    def transcribe(self, mel, options: DecodeOptions | dict | None = None, *, id: str | None = None,
                   n_frames: int | None = None) -> Iterator[Arrival]:
        """Send one [1, 80, 3000] mel window and yield the request's events as they arrive (long audio: one
        request per window, core/decode/window_feed.py).

        options: DecodeOptions, or a dict of `transcribe` header fields sent as they are (docs/protocol.md;
        the runner fills in what is missing and checks the rest).
        n_frames: how many mel frames hold audio (the rest of the last window is padding)."""
        try:
            desc, payload = P.mel_to_payload(mel, self.mel_dtype)
        except P.ProtocolError as exc:
            raise FeatureError(exc.message, "compute the log-mel with core.model.mel.mel_windows") from None
        self.connect()
        rid = id or uuid.uuid4().hex[:12]
        fields = options.to_wire() if isinstance(options, DecodeOptions) else dict(options or {})
        if fields.get("prompt") and "prompt" not in self.info.features:
            raise WhisperKVError(f"the runner on {self.transport.label} does not take a prompt (its hello lists "
                                 "no 'prompt' feature)", "deploy this version of the runner with "
                                 "`whisperkv deploy --device URL`, or send the request without a prompt")
        if fields.get("draft") and "draft" not in self.info.features:
            del fields["draft"]        # only saves time: an older runner decodes the same without it
        if fields.get("window_s") not in (None, *self.info.windows):
            del fields["window_s"]     # a runner without that window encodes 30 s, as an older one does
        header = {"op": "transcribe", "id": rid, "mel": desc, **fields}
        if n_frames is not None:
            header["n_frames"] = int(n_frames)
        if self.sample_s and "samples" in self.info.features:
            header["sample_s"] = self.sample_s
        frame = P.encode_frame(header, payload)
        self.received = []
        self.samples = []
        self._active = rid
        finished = False
        t0 = time.monotonic()
        try:
            self._send_raw(frame)
            self.upload_ms = (time.monotonic() - t0) * 1000
            while not finished:
                t, h = self._next(self.read_timeout, "waiting for the next event")
                if h.get("id") not in (rid, None) or h.get("type") == "hello":
                    continue      # late events of an earlier, abandoned request
                if h.get("type") == "error":
                    finished = True
                    raise refusal(h)
                if h.get("type") == "sample":
                    self.samples.append(h)
                    if self.on_sample is not None:
                        self.on_sample(h)
                    continue
                if h.get("type") == "npu_profile":
                    if self.on_npu_profile is not None:
                        self.on_npu_profile(h)
                    continue
                finished = bool(h.get("final")) and h.get("type") == "done"
                arrival = Arrival(self._event(h), rid, t, (t - t0) * 1000, finished, h.get("sent_t"))
                self.received.append(arrival)
                yield arrival
        finally:
            self._active = None
            if not finished and self._stream is not None:
                self._abandon(rid)

    def probe(self, mel, *, timeout: float | None = None) -> dict:
        """The `probe` event for one [1, 80, 3000] window (docs/protocol.md, feature `probe`): the graphs' outputs
        sampled and the first step's logits, for the doctor (device/runner/serve/probe.py)."""
        self.connect()
        if "probe" not in self.info.features:
            raise FeatureError(f"the runner on {self.transport.label} takes no `probe` request",
                               "deploy this version of the runner with `whisperkv deploy --device URL`")
        desc, payload = P.mel_to_payload(mel, "float32")
        rid = uuid.uuid4().hex[:12]
        self._send_raw(P.encode_frame({"op": "probe", "id": rid, "mel": desc}, payload))
        while True:
            _, h = self._next(timeout or self.read_timeout, "waiting for the probe's answer")
            if h.get("id") == rid and h.get("type") == "error":
                raise refusal(h)
            if h.get("id") == rid and h.get("type") == "probe":
                return h

    def _event(self, header: dict):
        """The event a frame holds; one this host cannot read ends the request (the finally above cancels it,
        so the link stays usable) with the events received so far kept."""
        try:
            return event_from_dict(header)
        except (KeyError, TypeError, ValueError) as exc:
            raise LinkLost(f"the runner on {self.transport.label} sent a {header.get('type')!r} event this host "
                           f"cannot read ({type(exc).__name__}: {exc})", "deploy a runner that matches this host "
                           "(`whisperkv deploy`); the events received so far are kept", self.received) from exc

    def cancel(self, id: str | None = None) -> None:
        """Ask the runner to stop the running request (safe from another thread); its done says cancelled."""
        rid = id or self._active
        if rid is not None and self._stream is not None:
            self._send({"op": "cancel", "id": rid})

    def _abandon(self, rid: str) -> None:
        """The caller stopped iterating: cancel, and drain to the request's end so the link stays usable."""
        try:
            self._send({"op": "cancel", "id": rid})
            while True:
                _, h = self._next(self.read_timeout, "draining a cancelled request")
                if h.get("id") == rid and (h.get("type") == "error" or h.get("final")):
                    return
        except (LinkLost, RunnerError):
            self._drop()

    # --- plumbing ----------------------------------------------------------------------------------
    def _send(self, header: dict) -> None:
        self._send_raw(P.encode_frame(header))

    def _send_raw(self, data: bytes) -> None:
        stream = self._stream
        if stream is None:
            raise LinkLost(f"not connected to {self.transport.label}", "connect again", self.received)
        try:
            with self._send_lock:
                stream.write(data)
        except (LinkLost, OSError) as exc:
            self._drop()
            raise LinkLost(f"the link to {self.transport.label} dropped while sending ({exc})", LINK_FIX,
                           self.received) from exc

    def _next(self, timeout: float, doing: str, fix: str = LINK_FIX) -> tuple[float, dict]:
        """The next frame's arrival time and header; LinkLost/LinkTimeout when the link fails."""
        deadline = time.monotonic() + timeout
        while not self._frames:
            stream = self._stream
            if stream is None:
                raise LinkLost(f"not connected to {self.transport.label}", "connect again", self.received)
            try:
                data = stream.read(max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                self._drop()
                raise LinkTimeout(f"no word from the runner on {self.transport.label} for {timeout:.0f} s "
                                  f"while {doing}", fix, self.received) from None
            except OSError as exc:
                data = b""
                doing += f" ({exc})"
            t = time.monotonic()
            if not data:
                tail = stream.stderr_tail()
                self._drop()
                where = f"; runner log:\n{tail}" if tail else ""
                raise LinkLost(f"the link to {self.transport.label} closed while {doing}, after "
                               f"{len(self.received)} events{where}", fix, self.received)
            self._frames.extend((t, f) for f in self._parser.feed(data))
        t, frame = self._frames.pop(0)
        if isinstance(frame, P.BadFrame):
            self._drop()
            raise LinkLost(f"the runner on {self.transport.label} sent a bad frame ({frame.message})",
                           "deploy a runner that matches this host (`whisperkv deploy`)", self.received)
        return t, frame.header

    def _drop(self) -> None:
        stream, self._stream = self._stream, None
        self._ended = stream or self._ended
        self.info = None
        if stream is not None:
            try:
                stream.close()
            except Exception:
                pass
