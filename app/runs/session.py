"""Every run of this app session, kept for compare and for the session JSON export."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from app.runs.record import RunRecord
from core.decode.events import event_from_dict, event_to_dict
from core.decode.options import DecodeOptions

SESSION_FORMAT = "whisperkv-session/1"


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
        "events": [dict(event_to_dict(ev), host_arrival_ms=round(t, 3)) for ev, t in zip(run.events, run.arrivals_ms)],
    }


def run_from_dict(d: dict) -> RunRecord:
    run = RunRecord(d["id"], d.get("audio", ""), DecodeOptions.from_dict(d.get("settings", {})), d.get("device", "local"),
                    d.get("device_info", {}), d.get("started", ""), d.get("duration_s", 0.0))
    for ev in d.get("events", []):
        run.add(event_from_dict(ev), float(ev.get("host_arrival_ms", 0.0)))
    run.error = d.get("error")
    run.qa_floor = d.get("qa_floor") or {}
    run.npu_profile = d.get("npu_profile")
    run.audio_path, run.audio_sha256 = d.get("audio_path", ""), d.get("audio_sha256", "")
    run.live = d.get("live")
    return run
