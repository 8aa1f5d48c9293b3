"""The speed and placement rungs (device/doctor/rungs_run.py) as a user gets the board: warm runtimes with the
Neuron profiler off, the runner's first window never timed, the native and the converted path side by side where a
V1 runtime offers both, and the profiler only with --npu-profile. First with a runner whose first window is slow
(no clock is read: the runner says what each window cost), then the doctor on the local runner with the STAND-IN
Neuron runtime."""
from __future__ import annotations

import json
import os

from cli.main import main
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.errors import WhisperKVError
from device.doctor.checkup import Checkup
from device.doctor.ladder import NAMES
from device.doctor.rungs_run import speed
from device.link.local import LocalTransport
from device.link.target import parse_target
from tests.cli.doctor_helpers import compiled_bundle, standin_library

COLD_MS, WARM_MS = 1000.0, 10.0
V1_NATIVE = {"runtime": "neuron", "api": "V1", "io": "native"}


class Runner:
    """A runner's decoder whose first window pays creation and caches (COLD_MS an encoder and a step), then `warm`."""

    def __init__(self, target=None, detail=None, kind="pc", warm=WARM_MS):
        self.target, self.warm, self.windows, self.samples, self.closed = target, warm, 0, [], False
        self.info = type("Info", (), {"raw": {"backend_detail": detail or {}, "runner_kind": kind}})()

    def connect(self):
        refused = self.info.raw["backend_detail"].get("refuses")
        if refused and self.target is not None and self.target.neuron_io == refused:
            raise WhisperKVError(f"no runtime takes neuron_io={self.target.neuron_io}", "")
        return self.info

    def new_run(self):
        self.samples = []

    def window(self, mel, options, n_frames):
        ms = COLD_MS if self.windows == 0 else self.warm
        self.windows += 1
        yield EncodedEvent(window=0, ms=ms, language="en")
        for step in range(4):
            yield TokenEvent(window=0, step=step, token=100 + step, text="x", logprob=0.0, eot_prob=0.0, top=[],
                             cache_len=step + 4, cache_bytes=0, ms=ms)
        yield DoneEvent(window=0, reason="eot", tokens=[100, 101, 102, 103], text="xxxx", ms_total=5 * ms)

    def close(self):
        self.closed = True


def checkup(monkeypatch, detail=None, npu_profile=False, tokens_ran=True, kind="pc", warm=WARM_MS):
    """A checkup after the tokens rung (its run on the ladder's runner: the first window, cold) and the runners
    the speed rung opens of its own."""
    c = Checkup(parse_target("local?backend=dla"), quick=True, npu_profile=npu_profile)
    c.decoder = Runner(detail=detail, kind=kind, warm=warm)
    if tokens_ran:
        list(c.decoder.window(None, None, 3000))
        c.runs["en_asterisk_hello-world.wav"] = {"board": {"encoder_ms": [COLD_MS], "steps": [(0, 0, COLD_MS)],
                                                           "samples": []}}
    opened = []

    def open_decoder(target, transport):
        opened.append(Runner(target, detail, kind, warm))
        return opened[-1]

    monkeypatch.setattr("device.doctor.rungs_run.open_decoder", open_decoder)
    return c, opened


def test_speed_times_warm_windows_never_the_runners_first(monkeypatch):
    c, opened = checkup(monkeypatch)
    f = speed(c).figures
    assert (f["encoder_ms"], f["first_token_ms"], f["ms_per_token"]) == (WARM_MS, WARM_MS, WARM_MS)
    assert opened == [] and "first window" in f["timed"] and "paths" not in f
    # no run before it: the ladder's runner decodes once, untimed, first
    c, _ = checkup(monkeypatch, tokens_ran=False)
    assert speed(c).figures["encoder_ms"] == WARM_MS and c.decoder.windows == 2


def test_a_v1_runtime_is_timed_on_both_paths_each_on_a_warm_runner_without_the_profiler(monkeypatch):
    c, opened = checkup(monkeypatch, V1_NATIVE)
    v = speed(c)
    assert [p["io"] for p in v.figures["paths"]] == ["native", "converted"]
    assert all(p["encoder_ms"] == p["ms_per_token"] == WARM_MS for p in v.figures["paths"])
    (converted,) = opened
    assert converted.target.neuron_io == "converted" and not converted.target.npu_profile and converted.closed
    assert "native: encoder" in v.decided_by and "converted: encoder" in v.decided_by
    # V2 converts only: one path
    c, opened = checkup(monkeypatch, {"runtime": "neuron", "api": "V2", "io": "converted"})
    assert "paths" not in speed(c).figures and opened == []


def test_a_path_that_cannot_be_timed_warns_and_speed_still_reports_the_other(monkeypatch):
    c, opened = checkup(monkeypatch, {**V1_NATIVE, "refuses": "converted"})
    v = speed(c)
    assert v.status == "warn" and v.figures["encoder_ms"] == WARM_MS and "paths" not in v.figures
    assert any(n.startswith("the converted path could not be timed: no runtime") for n in v.notes), v.notes


def test_a_profiled_ladder_runner_is_never_timed(monkeypatch):
    c, opened = checkup(monkeypatch, npu_profile=True)
    f = speed(c).figures
    (own,) = opened
    assert not own.target.npu_profile and own.closed and f["encoder_ms"] == WARM_MS
    assert c.decoder.windows == 1          # the profiled runner decoded the tokens rung's clip only


def test_slower_than_the_targets_off_a_board_is_one_sentence_that_says_it_is_fine(monkeypatch):
    c, _ = checkup(monkeypatch, warm=500.0)
    (note,) = speed(c).notes
    assert "not the board's" in note and "slower than the seed's targets" in note and "fine here" in note
    c, _ = checkup(monkeypatch, warm=500.0, kind="board")
    (note,) = speed(c).notes
    assert note.startswith("slower than the seed's targets") and "encoder 500.0 ms > 150 ms" in note


def linked_bundle(folder):
    """The compiled bundle's files linked into `folder`: the STAND-IN runtime logs each create and run beside the
    .dla it was given (`<dla>.calls`), here this test's own."""
    folder.mkdir()
    for f in compiled_bundle().iterdir():
        if not f.name.endswith(".calls"):
            (folder / f.name).symlink_to(f)
    return folder


def climb(capsys, monkeypatch, bundle, *extra):
    started = []
    start = LocalTransport.start_runner

    def spy(self, args):
        started.append((list(args), {k for k in os.environ if k.startswith("MTKNN_")}))
        return start(self, args)

    monkeypatch.setattr(LocalTransport, "start_runner", spy)
    device = f"local?backend=dla&neuron_lib={standin_library()}"
    code = main(["doctor", "--device", device, "--model", str(bundle), "--quick", "--json", *extra])
    doc = json.loads(capsys.readouterr().out)
    return code, {r["name"]: r for r in doc["rungs"]}, started


def test_the_doctor_times_warm_runtimes_with_the_profiler_off(capsys, monkeypatch, tmp_path):
    bundle = linked_bundle(tmp_path / "bundle")
    code, by, started = climb(capsys, monkeypatch, bundle)
    assert code == 0 and list(by) == list(NAMES)
    # no profiler flag or environment reached any runner: the ladder's, and the converted path's
    assert all("--npu-profile" not in args and not env for args, env in started) and len(started) == 2
    assert by["loads"]["figures"]["npu_profile"] == "off"
    # each runtime created once, at load: nothing was released and re-created to flush a report
    calls = (bundle / "encoder.dla.calls").read_text().split()
    assert calls.count("create") == 2, calls
    speed_figures = by["speed"]["figures"]
    assert "first window" in speed_figures["timed"] and speed_figures["io"] == "native"
    assert [p["io"] for p in speed_figures["paths"]] == ["native", "converted"]
    for p in speed_figures["paths"]:
        assert all(isinstance(p[k], float) for k in ("encoder_ms", "first_token_ms", "ms_per_token")), p
    # placement from hello alone, saying the profile was not asked for
    assert by["placement"]["figures"]["npu_profile"] is None
    assert "not asked for" in by["placement"]["figures"]["decided_by"]
