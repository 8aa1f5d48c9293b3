"""What the runner told the host: its `hello` (RunnerInfo), and each event as it arrived (Arrival)."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.model.dims import FULL_WINDOW_S
from core.model.placement import RanOn, ran_on


@dataclass
class Arrival:
    """One runner event as the host received it."""

    event: object            # core.decode.events EncodedEvent | TokenEvent | DoneEvent
    id: str
    host_t: float            # time.monotonic() when the bytes arrived
    host_ms: float           # milliseconds since the request started sending
    final: bool = False      # the last event of the request
    sent_t: float | None = None   # the runner's time.monotonic() when it wrote the event


@dataclass
class RunnerInfo:
    protocol: int
    runner_version: str
    backend: str
    model_sha256: str
    dims: dict
    cache_max_len: int
    bytes_per_token: int
    raw: dict = field(repr=False, default_factory=dict)
    features: tuple[str, ...] = ()     # hello.features: fields beyond protocol 1 as first written (e.g. "prompt")

    @classmethod
    def from_hello(cls, h: dict) -> "RunnerInfo":
        model, cache = h.get("model") or {}, h.get("cache") or {}
        features = h.get("features") if isinstance(h.get("features"), list) else []
        return cls(h.get("protocol", 0), h.get("runner_version", "?"), h.get("backend", "?"),
                   model.get("sha256", ""), model.get("dims") or {}, cache.get("max_len", 0),
                   cache.get("bytes_per_token", 0), h, tuple(f for f in features if isinstance(f, str)))

    @property
    def runner(self) -> str:
        """hello.runner: `python` or `native`, the runner that served; a runner that predates the field is the
        Python one (the native one always sends it)."""
        return str(self.raw.get("runner") or "python")

    @property
    def windows(self) -> tuple[int, ...]:
        """hello.windows: the encoder windows a request's window_s may ask for; 30 s alone from a runner without the
        list (an older one, or the native runner)."""
        listed = self.raw.get("windows")
        found = tuple(w for w in listed if type(w) is int) if isinstance(listed, list) else ()
        return found or (FULL_WINDOW_S,)

    @property
    def os(self) -> str:
        """hello.os: the system the runner runs on, "Linux" or "Android 14" ("" from a runner that predates it)."""
        return str(self.raw.get("os") or "")

    @property
    def soc(self) -> dict:
        """hello.soc: the SoC the runner read on its board and its NPU ({} from a runner that predates it)."""
        soc = self.raw.get("soc")
        return {"name": soc.get("name", "unknown"), "npu": soc.get("npu", "unknown")} if isinstance(soc, dict) else {}

    @property
    def dtype(self) -> str:
        """The model's dtype (fp32, fp16, a16w8, …) as the hello gives it, "" when it does not."""
        return str((self.raw.get("model") or {}).get("dtype") or (self.raw.get("backend_detail") or {}).get("weights")
                   or "")

    @property
    def cross(self) -> str:
        """The cross-state form (kv, absorbed) as the hello gives it, "" when it does not."""
        return str((self.raw.get("model") or {}).get("cross") or (self.raw.get("backend_detail") or {}).get("cross")
                   or "")

    @property
    def ran_on(self) -> RanOn:
        """Where its graphs run: the NPU (a .dla), a delegate's share of the ops, or the CPU (core/model/placement.py)."""
        return ran_on(self.backend, self.raw.get("backend_detail"))

    def summary(self) -> dict:
        """The hello fields a run record keeps (the studio's status bar, its session JSON)."""
        return {"runner": self.runner, **({"os": self.os} if self.os else {}), "runner_version": self.runner_version,
                "backend": self.backend,
                "model_sha256": self.model_sha256, "cache_max_len": self.cache_max_len,
                "bytes_per_token": self.bytes_per_token,
                "protocol": self.protocol, "soc": self.soc, "dtype": self.dtype, "cross": self.cross,
                "ran_on": self.ran_on.to_dict(),
                **{k: self.raw[k] for k in ("machine", "runner_kind") if self.raw.get(k)}}
