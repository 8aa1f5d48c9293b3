"""`whisperkv qa SUITE`: decode every clip of a suite on one or several devices, score it, say why each
decode stopped and, with --baseline, what got worse since an earlier report.

Exit status: 0 when every clip passes on every device and no clip has a --fail-on mark; 1 when a clip
fails, a device fails (the others' results are kept) or a clip regressed; 2 on a setup error (bad suite
or baseline, missing audio, unknown language; with one device, an unreachable device)."""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from cli.device_cmds import add_device_args
from cli.qa_devices import check_languages, device_urls, starter
from cli.window_args import add_window_args, window_rule
from core.decode.window_choice import AUTO, WindowRule
from core.file_formats import names_help
from core.qa import report as qa_report
from core.qa.baseline import MARKS, SlowerRule, compare, describe, load_baseline, settings
from core.qa.board_cost import describe as board_line
from core.qa.farm import QAReport
from core.qa.parallel import run_on_device, run_on_devices
from core.qa.run import SUMMARY_COLUMNS, ClipResult
from core.qa.suite import load_suite

# Alignment and width of each SUMMARY_COLUMNS column; the clip column fits the suite's longest name.
ALIGN = ("<{w}", "<6", ">11", ">5", "<10", ">6", ">10", ">12", ">6", ">5", "<11", "<")


def register(subs) -> None:
    p = subs.add_parser("qa", help="run a QA suite on one or more devices: WER/CER per clip, stop diagnostics, "
                        "cross-device view, regressions against a baseline, "
                        f"{'/'.join(f.name.upper() for f in qa_report.FORMATS)} report")
    p.add_argument("suite", help="a suite TOML file, e.g. resources/audio/suite.toml")
    files = [qa_report.file_name(f) for f in qa_report.FORMATS]
    p.add_argument("--out", default="qa-report", metavar="DIR",
                   help=f"where {', '.join(files[:-1])} and {files[-1]} go (default: ./qa-report)")
    p.add_argument("--format", action="append", choices=[f.name for f in qa_report.FORMATS], default=None,
                   dest="formats", help="write only this report format (repeatable; default: "
                   f"all): {names_help(qa_report.FORMATS)}")
    p.add_argument("--cache", choices=("on", "off"), default="on", help="KV cache on, or the uncached reference")
    p.add_argument("--timestamps", action="store_true", help="decode every clip with timestamps (default: "
                   "as each clip says)")
    add_window_args(p, "each clip")
    p.add_argument("--json", action="store_true", help="print the JSON report instead of the table")
    p.add_argument("--baseline", default=None, metavar="QA_JSON",
                   help="an earlier report's qa.json (or its directory): mark each clip regressed, slower or changed")
    p.add_argument("--slower-pct", type=_non_negative, default=SlowerRule.pct, metavar="PCT",
                   help=f"`slower` needs p50 ms/token up by more than PCT %% (default {SlowerRule.pct:g}) ...")
    p.add_argument("--slower-ms", type=_non_negative, default=SlowerRule.ms, metavar="MS",
                   help=f"... and by more than MS milliseconds (default {SlowerRule.ms:g})")
    p.add_argument("--fail-on", type=_marks, default=("regressed",), metavar="MARKS",
                   help="baseline marks that exit 1, comma-separated from regressed, slower, changed "
                        "(default: regressed; 'none' for none)")
    p.add_argument("--npu-profile", action="store_true", help="run each runner with the Neuron runtime's profiler "
                   "on: every clip's report shows each graph's slowest ops (dla, or tflite with the Neuron delegate)")
    add_device_args(p, repeatable=True)
    p.set_defaults(run=run)


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number ≥ 0")
    return value


def _marks(text: str) -> tuple[str, ...]:
    marks = tuple(m.strip() for m in text.split(",") if m.strip() and m.strip() != "none")
    bad = [m for m in marks if m not in MARKS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown mark {bad[0]!r}: use {', '.join(MARKS)} or none")
    return marks


def line(cells, width: int) -> str:
    return "  ".join(format(c, spec.format(w=width)) for c, spec in zip(cells, ALIGN)).rstrip()


def row(r: ClipResult, width: int) -> str:
    return "\n".join([line(r.summary_cells(), width)] + [f"    ✗ {f}" for f in r.failures])


def run(args) -> int:
    suite = load_suite(args.suite)
    urls = device_urls(args)
    old = load_baseline(args.baseline) if args.baseline else None
    check_languages(suite, urls)
    cache, window = args.cache == "on", window_rule(args)
    timestamps = True if args.timestamps else None
    out = sys.stderr if args.json else sys.stdout
    where = f"device {urls[0]}" if len(urls) == 1 else f"{len(urls)} devices ({', '.join(urls)})"
    print(f"suite {suite.name}: {len(suite.clips)} clips, {where}, cache {args.cache}"
          + (f", window {window.asked}" + (" s" if window.asked != AUTO else "")
             if window != WindowRule() else ""), file=out)
    width = max(len(c.name) for c in suite.clips)
    device_width = max(map(len, urls))
    prefix = (lambda url: "") if len(urls) == 1 else (lambda url: f"{url:<{device_width}}  ")
    print(prefix("device") + line(SUMMARY_COLUMNS, width), file=out)
    printing = threading.Lock()
    ticker = _Ticker(suite, out)

    def on_result(url: str, index: int, r: ClipResult) -> None:
        with printing:
            ticker.clear()
            print(prefix(url) + row(r, width).replace("\n", "\n" + prefix("")), file=out, flush=True)

    t0, date = time.perf_counter(), time.strftime("%Y-%m-%d %H:%M")
    if len(urls) == 1:   # in this thread: its failure is a setup error (exit 2), as it always was
        runs = [run_on_device(urls[0], starter(args, urls[0], suite), suite, cache, timestamps,
                              on_result=lambda i, r: on_result(urls[0], i, r), on_event=ticker.event, window=window)]
    else:
        runs = run_on_devices(suite, {u: starter(args, u, suite) for u in urls}, cache, timestamps, on_result,
                              window=window)
    report = QAReport(suite.name, str(suite.path), runs, meta={
        "cache": args.cache, **window.to_dict(), "date": date, "total_s": round(time.perf_counter() - t0, 1)})
    if old is not None:
        rule = SlowerRule(args.slower_pct, args.slower_ms)
        report.baseline = settings(args.baseline, rule, args.fail_on)
        report.comparisons = compare(old, runs, rule)
    paths = qa_report.write_reports(report, args.out, args.formats)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    _summary(report, out)
    verdict = f"{'PASS' if report.passed else 'FAIL'}; report: {paths.get('html') or next(iter(paths.values()))}"
    if report.multi:
        print(verdict, file=out)
    else:
        result = report.runs[0].result
        print(f"{result.n_passed}/{len(result.results)} passed — {verdict}", file=out)
    return 0 if report.passed else 1


def _summary(report: QAReport, out) -> None:
    """Per device (with several): clips passed or why it failed; what each board paid; the cross-device view;
    the baseline's marks."""
    for run in report.runs if report.multi else ():
        r = run.result
        print(f"{run.device}: {r.n_passed}/{len(r.results)} passed"
              + (f"; device FAILED: {run.error}" if run.error else ""), file=out)
    for run in report.runs:
        soc = run.result.meta.get("soc")
        if run.board or soc:
            print(f"{run.device}: {_soc_label(soc)}; {board_line(run.board)}", file=out)
    for x in report.device_rows:
        same, delta, ratio = x.cells()
        said = ("not compared: one of them has no result" if x.tokens_identical is None else
                f"tokens {same}, Δ error {delta}, latency ×{ratio}")
        print(f"  {x.name}: {x.device} vs {x.reference_device}: {said}", file=out)
    if report.baseline:
        n = {m: sum(m in c.marks for c in report.comparisons.values()) for m in MARKS}
        print(f"against {report.baseline['path']}: " + ", ".join(f"{v} {k}" for k, v in n.items())
              + f" (exit 1 on: {', '.join(report.baseline['fail_on']) or 'none'})", file=out)
        for run, r in report.clips():
            c = report.comparison(run.device, r.name)
            for phrase in describe(c, r) if c else ["not in the baseline"]:
                print(f"  {run.device + ' ' if report.multi else ''}{r.name}: {phrase}", file=out)


def _soc_label(soc: dict | None) -> str:
    return f"SoC {soc['name']} (NPU {soc['npu']})" if soc else "SoC not reported"


class _Ticker:
    """On a terminal, one redrawn line saying which clip is decoding and how far it got (one device only)."""

    def __init__(self, suite, out):
        self.suite, self.out, self.steps, self.shown = suite, out, 0, False
        self.tty = out.isatty()

    def event(self, index: int, ev) -> None:
        if not self.tty or ev.type != "token":
            return
        self.steps += 1
        print(f"\r  decoding {self.suite.clips[index].name}: window {ev.window}, {self.steps} tokens",
              end="", file=self.out, flush=True)
        self.shown = True

    def clear(self) -> None:
        self.steps = 0
        if self.shown:
            print("\r\033[K", end="", file=self.out)
            self.shown = False
