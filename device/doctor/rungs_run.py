"""The rungs that run the runner: loads, numbers, tokens, speed, placement (rows of ladder.py's table)."""
from __future__ import annotations

import statistics
import time

import numpy as np

from core.decode.events import EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from core.decode.window_feed import decode_source
from core.errors import WhisperKVError
from core.model.audio import load_audio
from core.model.mel_file import MelSource
from core.model.npu_profile import profiles
from core.qa.board_cost import clip_cost
from core.qa.scoring import error_rate, uses_cer
from device.doctor.checkup import Checkup, Verdict
from device.doctor.deployment import bundle_doc
from device.doctor.numbers import BOUNDS, INTEGER_AGAINST_FP32, against_own_graphs, arithmetic, compare
from device.doctor.reference import (
    CLIPS,
    QUICK_CLIPS,
    check_same_model,
    first_difference,
    first_window,
    reference_probe,
    run_clip,
    run_reference,
)
from device.link.client import RunnerError
from device.link.decoder import open_decoder

CREATE_FIX = ("check that the .dla was compiled for this SoC (`whisperkv compile DIR --soc auto --device URL`), "
              "that the APU driver is loaded (`dmesg | grep -i apu`) and that the runtime is MediaTek's")
NUMBERS_FIX = ("the board computes other numbers than the PC: check the compile flags for the bundle's dtype and "
               "the runtime's version, and attach doctor.html to a bug")
TOKENS_FIX = ("the board's text differs from the PC's beyond what its arithmetic explains: check the compile flags "
              "for the bundle's dtype and the runtime's version, and attach doctor.html to a bug")
# The seed's targets, and what the public MT8371 port measured (superLin006/MTK_model_zoo, whisper/mtk README).
TARGET_ENCODER_MS, TARGET_TOKEN_MS = 150.0, 15.0
PORT_ENCODER_MS, PORT_TOKEN_MS = 88.0, 44.0


def profiling(c: Checkup) -> bool:
    """The ladder's runner runs the Neuron profiler only when asked: --npu-profile, or the device's own setting."""
    return bool(c.npu_profile or c.target.npu_profile)


def loads(c: Checkup) -> Verdict:
    target = c.target.with_values(npu_profile=profiling(c))
    c.decoder = open_decoder(target, c.transport)
    t0 = time.monotonic()
    try:
        info = c.decoder.connect()
    except RunnerError as exc:
        message = exc.problem.split(": ", 1)[-1]
        fix = CREATE_FIX if "create" in message.lower() else exc.fix
        return Verdict(figures={"error": message}).fail(message, fix)
    raw = info.raw
    detail = raw.get("backend_detail") or {}
    # a .dla's compile flags and each slot's sizes and derived form: what only a board's report can settle
    graphs = [{k: g.get(k) for k in ("graph", "file", "load_ms", "runs_on", "flags", "slots") if g.get(k) is not None}
              for g in detail.get("graphs") or () if isinstance(g, dict)]
    v = Verdict(figures={"backend": info.backend, "load_ms": raw.get("load_ms"),
                         "hello_ms": round((time.monotonic() - t0) * 1e3, 1), "graphs": graphs,
                         "runner_version": info.runner_version, "runner_kind": raw.get("runner_kind"),
                         "npu": raw.get("npu"), "soc": raw.get("soc"), "model_sha256": info.model_sha256,
                         "library": detail.get("library"), "library_version": detail.get("library_version"),
                         "api": detail.get("api"), "io": detail.get("io"), "io_note": detail.get("io_note"),
                         "create": detail.get("create"), "cache_dtype": detail.get("cache_dtype"),
                         "npu_profile": raw.get("npu_profile_note") or ("on" if raw.get("npu_profile") else "off")})
    v.decided_by = f"{info.backend}, loaded in {raw.get('load_ms') or v.figures['hello_ms']} ms"
    return v


def _dtype(c: Checkup) -> str:
    return str(bundle_doc(c.bundle).get("dtype") or c.decoder.info.dtype or "fp32")


def _cross(c: Checkup) -> str:
    return str(bundle_doc(c.bundle).get("cross") or c.decoder.info.cross or "kv")


def numbers(c: Checkup) -> Verdict:
    check_same_model(c.decoder.info.model_sha256, _cross(c))
    board = c.decoder.client.probe(first_window(), timeout=900)
    dtype = _dtype(c)
    own = against_own_graphs(dtype) and c.bundle is not None and any(c.bundle.glob("*.tflite"))
    bound = BOUNDS[arithmetic(c.decoder.info.backend, dtype)]
    floor = INTEGER_AGAINST_FP32 if against_own_graphs(dtype) and not own else bound.cosine
    rows, problems = compare(board, reference_probe(_cross(c), str(c.bundle) if own else None), dtype, floor)
    v = Verdict(figures={"dtype": dtype, "arithmetic": bound.arithmetic, "against": "the bundle's TFLite graphs "
                         "in LiteRT" if own else "the NumPy reference", "cosine_floor": floor, "outputs": rows})
    if own:
        v.figures["against_fp32"] = compare(board, reference_probe(_cross(c)), dtype)[0]
    elif against_own_graphs(dtype):
        v.warn(f"an integer bundle ({dtype}) without its .tflite graphs on this PC is held against fp32, at a "
               f"cosine of {floor}: noise as large as its quantization's passes")
    if problems:
        return v.fail(problems[0], NUMBERS_FIX)
    worst = min(rows, key=lambda r: r["cosine"])
    v.decided_by = f"lowest cosine {worst['cosine']} ({worst['name']}), logits top-1 agree"
    return v


def tokens(c: Checkup) -> Verdict:
    """pass: the board's tokens are the reference's; warn: they differ within the arithmetic's bound (the first
    difference and the WER/CER shown); fail: beyond it."""
    bound = BOUNDS[arithmetic(c.decoder.info.backend, _dtype(c))]
    v = Verdict(figures={"clips": [], "arithmetic": bound.arithmetic, "max_error_rate": bound.wer})
    for path in QUICK_CLIPS if c.quick else CLIPS:
        c.decoder.new_run()
        board = run_clip(path, c.decoder.window)
        board["samples"] = list(c.decoder.samples)
        pc = dict(run_reference(path, _cross(c)))
        label = check_same_model(None, _cross(c)).tokenizer.token_label
        for run in (board, pc):
            run["pieces"] = [label(t) for t in run["tokens"]]
        lang = pc["language"] or "en"
        part = first_difference(board["tokens"], pc["tokens"])
        c.runs[path.name] = {"board": board, "pc": pc, "first_difference": part}
        measure = "cer" if uses_cer(lang) else "wer"
        rate = round(error_rate(pc["text"], board["text"], lang), 4)
        row = {"clip": path.name, "tokens": len(board["tokens"]), "pc_tokens": len(pc["tokens"]),
               "first_difference": part, measure: rate}
        v.figures["clips"].append(row)
        if part is None or v.status == "fail":
            continue
        said = (f"{path.name}: the board's tokens part from the PC's at step {part}, {measure.upper()} {rate:.3f} "
                f"(bound {bound.wer} for {bound.arithmetic})")
        if rate > bound.wer:
            v.fail(said, TOKENS_FIX)
        else:
            v.warn(f"{said}: within what that arithmetic moves, so fine")
    if v.status != "fail":
        v.decided_by = ", ".join(f"{r['clip']} {r['tokens']} tokens " + ("equal" if r["first_difference"] is None
                                 else f"within the bound from step {r['first_difference']}")
                                 for r in v.figures["clips"])
    return v


def speed(c: Checkup) -> Verdict:
    """Warm runtimes with the profiler off, as a user gets them: the clip decoded again on a runner whose first
    window (creation, caches) has passed, and where the runtime offers both paths (V1) the other too, side by
    side. These runs are not the tokens rung's."""
    clip = (QUICK_CLIPS if c.quick else CLIPS)[0]
    detail = c.decoder.info.raw.get("backend_detail") or {}
    io = detail.get("io")
    paths, untimed = [_warm_figures(c, clip, None, io)], ""
    if detail.get("runtime") == "neuron" and detail.get("api") == "V1" and io in IO_OTHER:
        try:
            paths.append(_warm_figures(c, clip, IO_OTHER[io], IO_OTHER[io]))
        except WhisperKVError as exc:       # only a comparison: speed never fails
            untimed = f"the {IO_OTHER[io]} path could not be timed: {exc.problem}"
    f = {k: paths[0][k] for k in ("encoder_ms", "first_token_ms", "ms_per_token")}
    cost = clip_cost([s for r in c.runs.values() for s in r["board"].get("samples") or []]
                     + paths[0].pop("samples")) or {}
    v = Verdict(figures={**f, "clip": clip.name, "timed": WARM, **({"io": io} if io else {}),
                         "target_encoder_ms": TARGET_ENCODER_MS, "target_ms_per_token": TARGET_TOKEN_MS,
                         "port_encoder_ms": PORT_ENCODER_MS, "port_ms_per_token": PORT_TOKEN_MS,
                         "peak_rss_mb": cost.get("peak_rss_mb"), "peak_temp_c": cost.get("peak_temp_c"),
                         "throttled": cost.get("throttled")})
    if len(paths) > 1:
        v.figures["paths"] = [{k: p[k] for k in ("io", "encoder_ms", "first_token_ms", "ms_per_token")}
                              for p in paths]
    v.decided_by = "; ".join(f"{p['io'] + ': ' if len(paths) > 1 else ''}encoder {p['encoder_ms']} ms, first "
                             f"token {p['first_token_ms']} ms, {p['ms_per_token']} ms a token" for p in paths)
    slow = [f"{what} {got} ms > {want:.0f} ms" for what, got, want in
            (("encoder", f["encoder_ms"], TARGET_ENCODER_MS), ("a token", f["ms_per_token"], TARGET_TOKEN_MS))
            if got is not None and got > want]
    if c.kind != "board":       # one sentence: slower or not, these times are no fault here
        c.board_only(v, "these times are not the board's" + (f", so slower than the seed's targets ("
                     f"{', '.join(slow)}) is no fault" if slow else ""), "")
    elif slow:
        v.warn("slower than the seed's targets: " + ", ".join(slow))      # speed never fails
    if untimed:
        v.warn(untimed)
    if cost.get("throttled") or cost.get("flag"):
        v.warn(cost.get("flag") or "the board throttled")
    return v


IO_OTHER = {"native": "converted", "converted": "native"}     # a V1 runtime offers both (settings.py, neuron_io)
WARM = "warm runtimes, the profiler off: the runner's first window (creation, caches) is not timed"


def _warm_figures(c: Checkup, clip, io: str | None, label: str | None) -> dict:
    """The clip timed on warm runtimes with the profiler off: on the ladder's runner when it runs without the
    profiler and the tokens rung has decoded on it already (its first window), else on a runner of its own (on the
    ladder's link, `io` its ?neuron_io=), whose first decode is a warm-up, not timed. The timed decode is the clip
    10 ms later (silence ahead), so that the runner's encoder cache, which keys on the mel, does not answer it."""
    own = io is not None or profiling(c)
    decoder = c.decoder
    if own:
        decoder = open_decoder(c.target.with_values(npu_profile=False, **({"neuron_io": io} if io else {})),
                               c.transport)
    audio = load_audio(clip)
    try:
        if own:
            decoder.connect()
        if own or not c.runs:
            _timed(decoder, audio)      # the runner's first window: not timed
        enc, steps = _timed(decoder, np.concatenate([np.zeros(160, np.float32), audio]))
    finally:
        if own:     # its own runner only: the link is the ladder's
            getattr(decoder, "client", decoder).close()
    return {"io": label or "", "encoder_ms": _med(enc), "first_token_ms": _med([ms for s, ms in steps if s == 0]),
            "ms_per_token": _med([ms for s, ms in steps if s > 0]), "samples": list(decoder.samples)}


def _timed(decoder, audio: np.ndarray) -> tuple[list[float], list[tuple[int, float]]]:
    """One decode of `audio`: each window's encoder ms (none where the encoder cache answered) and each step's."""
    decoder.new_run()
    enc, steps = [], []
    for ev in decode_source(MelSource.of_audio(audio), DecodeOptions(), decoder.window):
        if isinstance(ev, EncodedEvent) and not ev.cache_hit:
            enc.append(ev.ms)
        elif isinstance(ev, TokenEvent):
            steps.append((ev.step, ev.ms))
    return enc, steps


def _med(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


NOT_PROFILED = ("the Neuron runtime's profile was not asked for (`whisperkv doctor --npu-profile` adds each graph's "
                "time and slowest ops)")


def placement(c: Checkup) -> Verdict:
    ran = c.decoder.info.ran_on
    found = [{"graph": p.graph, "inferences": p.inferences, "ms_per_inference": round(p.ms_per_inference, 2),
              "slowest_ops": [o.name for o in p.ops[:3]], "table": p.table} for p in profiles(c.decoder.npu_files())]
    v = Verdict(figures={"where": ran.where, "label": ran.label, "ops": ran.ops, "cpu_ops": ran.cpu_ops,
                         "npu_profile": found}, decided_by=ran.label)
    if not profiling(c):        # where the graphs ran, from hello's backend_detail alone
        v.figures["npu_profile"] = None
        if ran.where != "cpu":  # the Neuron runtime ran some of it: its profile is there to ask for
            v.decided_by += f"; {NOT_PROFILED}"
    has_npu = (c.board.get("soc") or {}).get("npu") not in (None, "unknown") or bool(c.board.get("apusys"))
    if ran.where != "npu" and has_npu:
        v.warn(f"the graphs ran on {ran.label} on a board with an NPU")
    elif ran.where == "npu" and c.kind != "board":
        c.board_only(v, "the NPU here is not the board's", "")
    return v
