"""Every run of this app session, kept for compare and for the session JSON export.

A run's arrays are stored once, compactly: every token's attention (fp16 [heads, 1500], 24 kB a token) goes in
one block per run, its two bytes' planes apart and deflated, then base64 (`arrays.attention`: the events it
belongs to, the shape, the data), not as base64 inside each token event; a session of 14 runs was 23 MB. A file
of format 1 (attention in each event) reads as before."""
from __future__ import annotations

import base64
import time
import zlib
from dataclasses import dataclass, field, replace

import numpy as np

from app.runs.record import RunRecord
from core.decode.events import TokenEvent, event_from_dict, event_to_dict
from core.decode.options import DecodeOptions

SESSION_FORMAT = "whisperkv-session/2"


@dataclass
class Session:
    runs: list[RunRecord] = field(default_factory=list)
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))
    saved_through: int = 0         # the last run id written to a session file (closing asks about the rest)

    def new_run(self, audio_name: str, options: DecodeOptions, device: str, device_info: dict,
                duration_s: float = 0.0) -> RunRecord:
        run = RunRecord(len(self.runs) + 1, audio_name, options, device, dict(device_info), duration_s=duration_s)
        self.runs.append(run)
        return run

    def by_id(self, run_id: int) -> RunRecord | None:
        return next((r for r in self.runs if r.id == run_id), None)

    def to_dict(self) -> dict:
        return {"format": SESSION_FORMAT, "started": self.started, "runs": [run_to_dict(r) for r in self.runs]}

    @classmethod
    def from_dict(cls, d: dict) -> "Session":
        return cls(runs=[run_from_dict(r) for r in d.get("runs", [])], started=d.get("started", ""))


def run_to_dict(run: RunRecord) -> dict:
    return {
        "id": run.id,
        "audio": run.audio_name,
        "audio_path": run.audio_path,
        "audio_sha256": run.audio_sha256,
        "duration_s": run.duration_s,
        "started": run.started,
        "settings": run.options.to_dict(),
        "device": run.device,
        "device_info": run.device_info,
        "stop_reason": run.stop_reason,
        "text": run.text(),
        "error": run.error,
        "live": run.live,
        "qa_floor": run.qa_floor,
        "npu_profile": run.npu_profile,
        "events": [dict(event_to_dict(_bare(ev)), host_arrival_ms=round(t, 3))
                   for ev, t in zip(run.events, run.arrivals_ms)],
        "arrays": {"attention": pack_attention(run.events)},
    }


def _bare(ev):
    """A token event without its attention (stored in the run's arrays)."""
    return replace(ev, attention=None) if isinstance(ev, TokenEvent) and ev.attention is not None else ev


def pack_attention(events: list) -> list[dict]:
    """Every token event's attention, one block per shape: [{"events": indices, "shape", "dtype", "deflate"}]."""
    blocks: dict[tuple, tuple[list, list]] = {}
    for i, ev in enumerate(events):
        if isinstance(ev, TokenEvent) and ev.attention is not None:
            a = np.asarray(ev.attention, "<f2")
            indices, arrays = blocks.setdefault(a.shape, ([], []))
            indices.append(i)
            arrays.append(a)
    out = []
    for shape, (indices, arrays) in blocks.items():
        planes = np.stack(arrays).view(np.uint8).reshape(-1, 2).T     # low bytes, then high: they deflate apart
        out.append({"events": indices, "shape": [len(indices), *shape], "dtype": "<f2",
                    "deflate": base64.b64encode(zlib.compress(planes.tobytes(), 6)).decode("ascii")})
    return out


def unpack_attention(blocks: list[dict]) -> dict[int, np.ndarray]:
    """event index → its attention array, from pack_attention's blocks."""
    out = {}
    for block in blocks:
        planes = np.frombuffer(zlib.decompress(base64.b64decode(block["deflate"])), np.uint8).reshape(2, -1)
        stacked = np.ascontiguousarray(planes.T).view(block.get("dtype", "<f2")).reshape(block["shape"])
        out.update(zip(block["events"], stacked))
    return out


def run_from_dict(d: dict) -> RunRecord:
    run = RunRecord(d["id"], d.get("audio", ""), DecodeOptions.from_dict(d.get("settings", {})),
                    d.get("device", "local"), d.get("device_info", {}), d.get("started", ""), d.get("duration_s", 0.0))
    attention = unpack_attention((d.get("arrays") or {}).get("attention") or [])
    for i, ev in enumerate(d.get("events", [])):
        event = event_from_dict(ev)
        if i in attention:
            event.attention = attention[i]
        run.add(event, float(ev.get("host_arrival_ms", 0.0)))
    run.error = d.get("error")
    run.qa_floor = d.get("qa_floor") or {}
    run.npu_profile = d.get("npu_profile")
    run.audio_path, run.audio_sha256 = d.get("audio_path", ""), d.get("audio_sha256", "")
    run.live = d.get("live")
    return run
